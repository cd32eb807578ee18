//! The filesystem store's bulk paths for folder revisions: a whole revision's files are
//! copied on a couple of blocking threads (one call, no per-file task hops), instead of one
//! `write`/`read` per object. Same rules as the per-object path: files are created
//! create-only (`O_EXCL`), restores are confined beneath the destination and checked
//! against the manifest sizes, and `cancel` is checked before each file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::blocking::blocking;
use crate::cancel::{Cancel, Phase};
use crate::confine::{create_file_with, file_mode, KnownDirs};
use crate::error::{is_absent, Result, WorkspaceError};
use crate::folder::{missing, refusal, unexpected_size};
use crate::storage::{LocalFile, ObjectFile};

/// Blocking threads per batch: the machine this targets has two cores, and more threads
/// only contend on the same directories' locks.
const THREADS: usize = 2;

/// Splits `items` into `THREADS` contiguous runs (sorted paths keep a directory in one run,
/// so the threads rarely share a directory lock) and runs `work` on each on blocking
/// threads. Every run finishes before this returns; the first error (an abort last) wins.
async fn in_parallel<T: Clone + Send + 'static>(
    items: &[T],
    stop: Cancel,
    work: impl Fn(&[T], &Cancel) -> Result<()> + Send + Sync + Clone + 'static,
) -> Result<()> {
    let chunk = items.len().div_ceil(THREADS).max(1);
    let runs: Vec<_> = items
        .chunks(chunk)
        .map(|run| {
            let (run, work, stop) = (run.to_vec(), work.clone(), stop.clone());
            blocking(move || {
                let outcome = work(&run, &stop);
                if outcome.is_err() {
                    stop.cancel();
                }
                outcome
            })
        })
        .collect();
    let mut first_abort = None;
    let mut failure = None;
    for outcome in futures_util::future::join_all(runs).await {
        match outcome {
            Ok(()) => {}
            Err(error) if crate::cancel::is_aborted(&error) => {
                first_abort.get_or_insert(error);
            }
            Err(error) => {
                failure.get_or_insert(error);
            }
        }
    }
    match (failure, first_abort) {
        (Some(error), _) | (None, Some(error)) => Err(error),
        (None, None) => Ok(()),
    }
}

/// A sibling run failed: stop quietly (its error is the one reported).
fn stopped(sibling: &Cancel) -> bool {
    sibling.is_cancelled()
}

/// Stores `files` create-only beneath `root` (paths already validated).
pub async fn write_files(root: &Path, files: &[LocalFile], cancel: &Cancel) -> Result<()> {
    let (root, cancel) = (root.to_path_buf(), cancel.clone());
    in_parallel(files, Cancel::new(), move |run, sibling| {
        let mut made = std::collections::HashSet::new();
        for file in run {
            if stopped(sibling) {
                return Ok(());
            }
            cancel.entry(Phase::Save, &file.path)?;
            write_one(&root, file, &mut made)?;
        }
        Ok(())
    })
    .await
}

fn write_one(
    root: &Path,
    file: &LocalFile,
    made: &mut std::collections::HashSet<PathBuf>,
) -> Result<()> {
    let target = root.join(&file.path);
    let parent = target.parent().expect("storage paths have a parent");
    if !made.contains(parent) {
        fs::create_dir_all(parent).map_err(|e| WorkspaceError::io(&e, "mkdir", parent))?;
        made.insert(parent.to_path_buf());
    }
    let mut source = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&file.source)
        .map_err(|e| WorkspaceError::io(&e, "open", &file.source))?;
    let mut out = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
    {
        Ok(out) => out,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            return Err(WorkspaceError::error(
                "Filesystem Workspace conditional write failed",
            ))
        }
        Err(error) => return Err(WorkspaceError::io(&error, "open", &target)),
    };
    // At most the snapshot's size, as the per-object path uploads (the manifest records it).
    let copied = io::copy(&mut (&mut source).take(file.size), &mut out);
    if let Err(error) = copied {
        drop(out);
        let _ = fs::remove_file(&target);
        return Err(WorkspaceError::io(&error, "write", &target));
    }
    Ok(())
}

/// Copies the objects `files` from `root` into new files beneath `dest`.
pub async fn read_files(
    root: &Path,
    files: &[ObjectFile],
    dest: &Path,
    cancel: &Cancel,
) -> Result<()> {
    let (root, dest, cancel) = (root.to_path_buf(), dest.to_path_buf(), cancel.clone());
    in_parallel(files, Cancel::new(), move |run, sibling| {
        let mut known = KnownDirs::default();
        for file in run {
            if stopped(sibling) {
                return Ok(());
            }
            cancel.entry(Phase::Restore, &file.entry)?;
            read_one(&root, file, &dest, &mut known)?;
        }
        Ok(())
    })
    .await
}

fn read_one(root: &Path, file: &ObjectFile, dest: &Path, known: &mut KnownDirs) -> Result<()> {
    let at = root.join(&file.path);
    let source = match File::open(&at) {
        Ok(source) => source,
        Err(error) if is_absent(&error) => return Err(missing(&file.entry)),
        Err(error) => return Err(WorkspaceError::io(&error, "open", &at)),
    };
    let size = source
        .metadata()
        .map_err(|e| WorkspaceError::io(&e, "fstat", &at))?
        .len();
    if size != file.size {
        return Err(unexpected_size(&file.entry));
    }
    let (mut out, path) =
        create_file_with(dest, &file.entry, known).map_err(|r| refusal(r, &file.entry))?;
    let copied = io::copy(&mut source.take(file.size + 1), &mut out)
        .map_err(|e| WorkspaceError::io(&e, "write", &path))?;
    if copied != file.size {
        return Err(unexpected_size(&file.entry));
    }
    out.set_permissions(fs::Permissions::from_mode(file_mode(file.mode)))
        .map_err(|e| WorkspaceError::io(&e, "chmod", &path))
}
