//! Confined file access beneath a materialization root, for `<File>` and `<Include path>`.
//!
//! Every operation walks the portable path one segment at a time from a directory file
//! descriptor of the root (`openat` with `O_NOFOLLOW | O_DIRECTORY`), so a symlinked or
//! non-directory parent is refused instead of followed, and a parent swapped for a symlink
//! after the check cannot redirect the write: the final operation is relative to a
//! descriptor of a directory that was verified beneath the root. The root itself is trusted
//! (it is the provider's materialization and may be reached through symlinks).
//!
//! Writes go to `.aml-file-<uuid>.tmp` in the destination's directory, created exclusively
//! and renamed over the destination, so a reader sees the old or the new content, never a
//! torn one. The temporary file is removed on every failure path.

mod path;
mod walk;

use std::io;
use std::path::Path;

pub use path::{portable_segments, PathError};

/// A failed confined operation.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The portable path itself is unusable (empty, absolute, traversal, NUL…).
    #[error(transparent)]
    Path(#[from] PathError),
    /// A parent segment is a symlink or not a directory; carries the portable prefix
    /// up to and including that segment (`"a/b"`).
    #[error("parent \"{0}\" is not a directory")]
    ParentNotDirectory(String),
    /// The destination is a symlink, a directory or another non-regular entry.
    #[error("destination must be a regular file")]
    NotRegularFile,
    /// A Sandbox root beneath the base resolves (through a symlink) outside the base.
    #[error("root resolves outside its configured boundary")]
    RootEscapes,
    /// A file read is larger than [`MAX_READ_BYTES`].
    #[error("file is larger than {MAX_READ_BYTES} bytes")]
    TooLarge,
    /// Any other I/O failure (missing file, permissions, full disk…).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Largest file a confined read (and a guest read, `lib/files/guest-file.js`) returns. Why:
/// the content becomes one JavaScript string, and V8 cannot make one much beyond 512 Mi
/// UTF-16 units; refusing before allocating beats an out-of-memory abort of the host.
pub const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;

/// The POSIX name of an I/O error's errno (`"ENOENT"`…), as Node spells `error.code`.
pub fn errno_code(error: &io::Error) -> Option<&'static str> {
    Some(match error.raw_os_error()? {
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EROFS => "EROFS",
        libc::EISDIR => "EISDIR",
        libc::ENOTDIR => "ENOTDIR",
        libc::EEXIST => "EEXIST",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EIO => "EIO",
        libc::EMFILE => "EMFILE",
        _ => return None,
    })
}

/// Replaces `path` (portable, relative to `root`) with `content`, creating missing parents.
pub fn write_file(root: &Path, path: &str, content: &[u8]) -> Result<(), FsError> {
    write_file_beneath(root, ".", path, content)
}

/// Reads the regular file at `path` (portable, relative to `root`) without following
/// symlinks anywhere beneath the root.
pub fn read_file(root: &Path, path: &str) -> Result<Vec<u8>, FsError> {
    read_file_beneath(root, ".", path)
}

/// [`write_file`] for a Sandbox whose guest files are host files: `base` is the host
/// directory of the lease's root and `root` the session's root relative to it (a nested
/// `<Sandbox root>`, `"."` for the lease root). `root` may pass through symlinks that stay
/// beneath `base` (as the guest's own `cd` would); `path` below it follows none.
pub fn write_file_beneath(
    base: &Path,
    root: &str,
    path: &str,
    content: &[u8],
) -> Result<(), FsError> {
    let (parents, name) = portable_segments(path)?;
    let dir = walk::open_parents(walk::open_root(base, root)?, &parents, true)?;
    walk::check_destination(&dir, name, true)?;
    walk::replace_atomically(&dir, name, content)
}

/// [`read_file`] beneath a Sandbox root, as [`write_file_beneath`] writes.
pub fn read_file_beneath(base: &Path, root: &str, path: &str) -> Result<Vec<u8>, FsError> {
    let (parents, name) = portable_segments(path)?;
    let dir = walk::open_parents(walk::open_root(base, root)?, &parents, false)?;
    walk::read_regular(&dir, name)
}
