//! Removing another holder's lock directory (stale, or its owner died) without ever removing
//! a fresh one. A plain "check, then `rmdir`" is a race among takers: two see the same stale
//! lock, the first removes it and takes the path anew, and the second then removes the first
//! one's fresh lock, so both believe they hold it. Here the directory is first moved aside
//! under a private name (of several `rename`s of one directory only one succeeds), the check
//! is made on what was moved (nobody else can touch it there), and a directory that turns
//! out not to be removable is put back with a rename that never replaces.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `path` with `suffix` appended to its last component: the lock's sibling names (`.lock`,
/// `.holder`, `.taking-…`).
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Moves `lock` aside and removes it when `removable` holds for the moved directory;
/// otherwise puts it back. Nothing there (another taker was first) is not an error.
pub(crate) fn remove_if(lock: &Path, removable: impl FnOnce(&Path) -> bool) -> io::Result<()> {
    let aside = &with_suffix(lock, &format!(".taking-{}", uuid::Uuid::new_v4()));
    match fs::rename(lock, aside) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    }
    if removable(aside) {
        return fs::remove_dir_all(aside);
    }
    match rename_noreplace(aside, lock) {
        Ok(()) => Ok(()),
        Err(error) => {
            // A newer lock took the path while its predecessor was aside: that predecessor's
            // holder finds its directory gone at its next check and reports the lock lost.
            let _ = fs::remove_dir_all(aside);
            if error.kind() == io::ErrorKind::AlreadyExists {
                Ok(())
            } else {
                Err(error)
            }
        }
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

/// `rename(from, to)` that fails with `AlreadyExists` instead of replacing `to`.
#[cfg(target_os = "linux")]
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (from, to) = (c_path(from)?, c_path(to)?);
    // SAFETY: two NUL-terminated paths that outlive the call. The raw system call, because
    // musl's libc has no `renameat2` wrapper.
    let result = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(target_os = "macos")]
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (from, to) = (c_path(from)?, c_path(to)?);
    // SAFETY: two NUL-terminated paths that outlive the call.
    let result = unsafe { libc::renamex_np(from.as_ptr(), to.as_ptr(), libc::RENAME_EXCL) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    // No atomic form here: the window between the check and the rename is left open.
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    fs::rename(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removable_directory_goes_and_nothing_is_left_aside() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("w.lock");
        fs::create_dir(&lock).unwrap();
        fs::write(lock.join("owner"), "1").unwrap();
        remove_if(&lock, |aside| aside.join("owner").exists()).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_that_is_not_removable_is_put_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("w.lock");
        fs::create_dir(&lock).unwrap();
        fs::write(lock.join("owner"), "mine").unwrap();
        remove_if(&lock, |_| false).unwrap();
        assert_eq!(fs::read_to_string(lock.join("owner")).unwrap(), "mine");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_newer_lock_that_took_the_path_meanwhile_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("w.lock");
        fs::create_dir(&lock).unwrap();
        remove_if(&lock, |_| {
            // Another process takes the path while the old directory is aside.
            fs::create_dir(&lock).unwrap();
            fs::write(lock.join("owner"), "newer").unwrap();
            false
        })
        .unwrap();
        assert_eq!(fs::read_to_string(lock.join("owner")).unwrap(), "newer");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn nothing_there_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        remove_if(&dir.path().join("w.lock"), |_| unreachable!()).unwrap();
    }
}
