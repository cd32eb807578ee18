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

/// Opens the base directory of a confined operation. The base is the provider's
/// materialization (or a Sandbox's host root): following a symlink to it is intended.
fn open_base(base: &Path) -> io::Result<OwnedFd> {
    open_at(
        None,
        base.as_os_str().as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )
}

/// Opens the directory `root` (a portable logical path, `"."` for the base itself) beneath
/// `base`. Symlinks inside `root` may be followed, but only while they stay beneath the base:
/// `openat2(RESOLVE_BENEATH)` where the kernel has it, else an open whose result is verified
/// by its descriptor's real path. Escaping is [`FsError::RootEscapes`].
pub(crate) fn open_root(base: &Path, root: &str) -> Result<OwnedFd, FsError> {
    let base_fd = open_base(base)?;
    let root = root.trim_end_matches('/');
    if root.is_empty() || root == "." {
        return Ok(base_fd);
    }
    if let Some(problem) = crate::portable_path::shape_problem(root) {
        return Err(FsError::Path(problem.into()));
    }
    #[cfg(target_os = "linux")]
    match beneath::openat2(&base_fd, root) {
        Ok(fd) => return Ok(fd),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => return Err(FsError::RootEscapes),
        Err(e) if beneath::unsupported(&e) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = open_at(
        Some(&base_fd),
        root.as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )?;
    if beneath::is_beneath(&base_fd, &fd)? {
        Ok(fd)
    } else {
        Err(FsError::RootEscapes)
    }
}

mod beneath {
    use std::io;
    #[cfg(any(target_os = "linux", target_os = "macos", target_os = "ios"))]
    use std::os::fd::AsRawFd;
    #[cfg(target_os = "linux")]
    use std::os::fd::FromRawFd;
    use std::os::fd::OwnedFd;

    #[cfg(target_os = "linux")]
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }

    /// `openat2(dir, path, O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, retried
    /// while the kernel reports a concurrent rename (`EAGAIN`).
    #[cfg(target_os = "linux")]
    pub(super) fn openat2(dir: &OwnedFd, path: &str) -> io::Result<OwnedFd> {
        let path = super::c_string(path.as_bytes())?;
        let how = OpenHow {
            flags: (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
        };
        let mut attempts = 0;
        loop {
            // SAFETY: `path` is NUL-terminated, `how` is a valid `struct open_how` of the
            // size passed, and `dir` is an open descriptor owned by the caller.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    dir.as_raw_fd(),
                    path.as_ptr(),
                    &how as *const OpenHow,
                    std::mem::size_of::<OpenHow>(),
                )
            };
            if fd >= 0 {
                let fd =
                    i32::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
                // SAFETY: the kernel just returned this descriptor; nobody else owns it.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
            let error = io::Error::last_os_error();
            attempts += 1;
            if error.raw_os_error() == Some(libc::EAGAIN) && attempts < 64 {
                continue;
            }
            return Err(error);
        }
    }

    /// A kernel (or seccomp filter) without `openat2`.
    #[cfg(target_os = "linux")]
    pub(super) fn unsupported(error: &io::Error) -> bool {
        matches!(
            error.raw_os_error(),
            Some(libc::ENOSYS | libc::EPERM | libc::EINVAL | libc::E2BIG)
        )
    }

    /// True when the directory open as `fd` is `base` or beneath it, judged by what the
    /// descriptors are now (not by a path that could be swapped after the check).
    pub(super) fn is_beneath(base: &OwnedFd, fd: &OwnedFd) -> io::Result<bool> {
        Ok(real_path(fd)?.starts_with(real_path(base)?))
    }

    #[cfg(target_os = "linux")]
    fn real_path(fd: &OwnedFd) -> io::Result<std::path::PathBuf> {
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    }

    #[cfg(any(target_os = "macos", target_os = "ios"))]
    fn real_path(fd: &OwnedFd) -> io::Result<std::path::PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let mut buffer = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: `buffer` has PATH_MAX writable bytes, as F_GETPATH requires.
        let result = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPATH, buffer.as_mut_ptr()) };
        if result < 0 {
            return Err(io::Error::last_os_error());
        }
        let end = buffer.iter().position(|b| *b == 0).unwrap_or(buffer.len());
        Ok(std::ffi::OsStr::from_bytes(&buffer[..end]).into())
    }

    #[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "ios")))]
    fn real_path(_fd: &OwnedFd) -> io::Result<std::path::PathBuf> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// Opens the directory holding the destination: from `dir`, each parent segment without
/// following symlinks, creating missing ones when `create` is set.
pub(crate) fn open_parents(
    mut dir: OwnedFd,
    parents: &[&str],
    create: bool,
) -> Result<OwnedFd, FsError> {
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
    let file = File::from(fd);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(FsError::NotRegularFile);
    }
    if metadata.len() > super::MAX_READ_BYTES {
        return Err(FsError::TooLarge);
    }
    // The size may grow while we read: never hold more than the limit (plus the one byte that
    // proves it was exceeded).
    let mut content = Vec::with_capacity(metadata.len() as usize);
    file.take(super::MAX_READ_BYTES + 1)
        .read_to_end(&mut content)?;
    if content.len() as u64 > super::MAX_READ_BYTES {
        return Err(FsError::TooLarge);
    }
    Ok(content)
}
