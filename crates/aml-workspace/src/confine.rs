//! Writes confined beneath a root: parents are created one component at a time and must be
//! real directories (never symbolic links), files are created exclusively without following
//! a link, so a restored revision cannot write a byte outside its materialization.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a confined write was refused.
#[derive(Debug)]
pub enum Refused {
    /// The path would pass through or replace something that is not a plain directory.
    Unsafe,
    Io(io::Error, PathBuf),
}

/// Creates `rel` (a validated entry path) and every missing parent beneath `root`, as real
/// directories. An existing component must be a directory, not a link or a file.
pub fn ensure_dir(root: &Path, rel: &str) -> Result<PathBuf, Refused> {
    let mut path = root.to_path_buf();
    for segment in rel.split('/') {
        path.push(segment);
        match DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                let meta = fs::symlink_metadata(&path).map_err(|e| Refused::Io(e, path.clone()))?;
                if !meta.file_type().is_dir() {
                    return Err(Refused::Unsafe);
                }
            }
            Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => {
                return Err(Refused::Unsafe)
            }
            Err(error) => return Err(Refused::Io(error, path)),
        }
    }
    Ok(path)
}

/// Creates the new file `rel` beneath `root` (parents included). An existing entry of that
/// name (a duplicate archive entry, a link) is refused.
pub fn create_file(root: &Path, rel: &str) -> Result<(File, PathBuf), Refused> {
    create_file_with(root, rel, &mut KnownDirs::default())
}

/// Parent directories a restore already created or checked, so a tree of thousands of files
/// walks each parent once. Sound because a restore fills a private, fresh directory and
/// creates nothing but plain files and directories there: nothing it writes can turn a
/// checked directory into a link.
#[derive(Default)]
pub struct KnownDirs(std::collections::HashSet<String>);

impl KnownDirs {
    pub fn ensure(&mut self, root: &Path, rel: &str) -> Result<PathBuf, Refused> {
        if self.0.contains(rel) {
            return Ok(root.join(rel));
        }
        let path = ensure_dir(root, rel)?;
        self.0.insert(rel.to_string());
        Ok(path)
    }
}

/// [`create_file`] with a cache of checked parents.
pub fn create_file_with(
    root: &Path,
    rel: &str,
    known: &mut KnownDirs,
) -> Result<(File, PathBuf), Refused> {
    let path = match rel.rsplit_once('/') {
        Some((parent, name)) => known.ensure(root, parent)?.join(name),
        None => root.join(rel),
    };
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    {
        Ok(file) => Ok((file, path)),
        Err(error)
            if error.kind() == io::ErrorKind::AlreadyExists
                || matches!(
                    error.raw_os_error(),
                    Some(libc::ELOOP | libc::ENOTDIR | libc::EISDIR)
                ) =>
        {
            Err(Refused::Unsafe)
        }
        Err(error) => Err(Refused::Io(error, path)),
    }
}

/// Permission bits to restore: files as saved, directories always owner-usable so the
/// materialization can be filled and removed again.
pub fn file_mode(mode: u32) -> u32 {
    mode & 0o777
}
pub fn dir_mode(mode: u32) -> u32 {
    (mode & 0o777) | 0o700
}
