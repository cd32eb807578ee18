//! The descriptor walk beneath a root (see the crate docs for why descriptors).

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::FsError;

fn c_string(text: &[u8]) -> io::Result<CString> {
    CString::new(text).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// `openat(dir, name, flags, mode)` as an owned descriptor.
fn open_at(
    dir: Option<&OwnedFd>,
    name: &[u8],
    flags: i32,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let name = c_string(name)?;
    let base = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `name` is a valid NUL-terminated string for the duration of the call and
    // `base` is either AT_FDCWD or a descriptor owned by the caller.
    let fd = unsafe {
        libc::openat(
            base,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat, is valid and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

const DIRECTORY_FLAGS: i32 = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

/// Opens the directory holding the destination: the root, then each parent segment without
/// following symlinks, creating missing ones when `create` is set.
pub(crate) fn open_parents(
    root: &Path,
    parents: &[&str],
    create: bool,
) -> Result<OwnedFd, FsError> {
    // The root is the provider's materialization: following a symlink to it is intended.
    let mut dir = open_at(
        None,
        root.as_os_str().as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )?;
    let mut prefix = String::new();
    for segment in parents {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(segment);
        dir = loop {
            match open_at(Some(&dir), segment.as_bytes(), DIRECTORY_FLAGS, 0) {
                Ok(next) => break next,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                    let name = c_string(segment.as_bytes())?;
                    // SAFETY: `name` is NUL-terminated and `dir` is an open directory.
                    match check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) }) {
                        // Created here, or concurrently by someone else: open it (again
                        // without following, so a racing symlink is still refused).
                        Ok(()) => {}
                        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                    return Err(FsError::ParentNotDirectory(prefix));
                }
                Err(e) => return Err(e.into()),
            }
        };
    }
    Ok(dir)
}

/// `lstat` of `name` in `dir`: `None` when missing.
fn stat_at(dir: &OwnedFd, name: &str) -> io::Result<Option<libc::stat>> {
    let name = c_string(name.as_bytes())?;
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is NUL-terminated, `dir` is open and `stat` points to writable memory
    // large enough for a `struct stat`.
    let result = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match check(result) {
        // SAFETY: fstatat succeeded, so it initialised the whole struct.
        Ok(()) => Ok(Some(unsafe { stat.assume_init() })),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

fn is_regular(stat: &libc::stat) -> bool {
    stat.st_mode & libc::S_IFMT == libc::S_IFREG
}

/// Refuses an existing destination that is not a regular file (a symlink is never followed).
pub(crate) fn check_destination(
    dir: &OwnedFd,
    name: &str,
    allow_missing: bool,
) -> Result<(), FsError> {
    match stat_at(dir, name)? {
        Some(stat) if !is_regular(&stat) => Err(FsError::NotRegularFile),
        Some(_) => Ok(()),
        None if allow_missing => Ok(()),
        None => Err(io::Error::from(io::ErrorKind::NotFound).into()),
    }
}

fn temporary_name() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    // A version 4 UUID, as `crypto.randomUUID()` would spell it.
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        ".aml-file-{}-{}-{}-{}-{}.tmp",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

fn unlink_at(dir: &OwnedFd, name: &str) {
    if let Ok(name) = c_string(name.as_bytes()) {
        // SAFETY: `name` is NUL-terminated and `dir` is open. Best effort: the temporary
        // file may already be gone.
        unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
    }
}

/// Writes `content` to a fresh temporary file in `dir` and renames it over `name`.
pub(crate) fn replace_atomically(dir: &OwnedFd, name: &str, content: &[u8]) -> Result<(), FsError> {
    let temporary = temporary_name()?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    let fd = open_at(Some(dir), temporary.as_bytes(), flags, 0o666)?;
    let written = (|| -> io::Result<()> {
        let mut file = File::from(fd);
        file.write_all(content)?;
        file.flush()
    })();
    let renamed = written.and_then(|()| {
        let from = c_string(temporary.as_bytes())?;
        let to = c_string(name.as_bytes())?;
        // SAFETY: both names are NUL-terminated and relative to the same open directory.
        check(unsafe {
            libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr())
        })
    });
    match renamed {
        Ok(()) => Ok(()),
        Err(e) => {
            unlink_at(dir, &temporary);
            // A directory that appeared at the destination after the check.
            if matches!(
                e.raw_os_error(),
                Some(libc::EISDIR | libc::ENOTEMPTY | libc::EEXIST)
            ) {
                return Err(FsError::NotRegularFile);
            }
            Err(e.into())
        }
    }
}

/// Reads the regular file `name` in `dir` without following a symlink.
pub(crate) fn read_regular(dir: &OwnedFd, name: &str) -> Result<Vec<u8>, FsError> {
    // O_NONBLOCK: opening a FIFO must not block; it is refused just below.
    let fd = match open_at(
        Some(dir),
        name.as_bytes(),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    ) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(FsError::NotRegularFile),
        Err(e) => return Err(e.into()),
    };
    let mut file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(FsError::NotRegularFile);
    }
    let mut content = Vec::new();
    file.read_to_end(&mut content)?;
    Ok(content)
}
