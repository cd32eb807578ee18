//! Workspace transfer for remote Sandboxes (Daytona, Modal): a host tree packed into the
//! revision archive format for hydration, and a downloaded archive mirrored back into the
//! host tree for reconciliation — additions, changes and deletions — with the archive
//! rules (only files and directories, only safe relative paths, bounded entries and bytes)
//! and the confined writes of `confine.rs`, so a remote tree cannot write outside `dest`.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::archive::{extract_archive, write_archive, ExtractLimits};
use crate::cancel::Cancel;
use crate::confine::{create_file, ensure_dir, Refused};
use crate::error::{Result, WorkspaceError};
use crate::select::{snapshot, Selection, SnapshotLimits};

/// A private scratch directory under the system temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let path =
            std::env::temp_dir().join(format!("aml-sandbox-transfer-{}", uuid::Uuid::new_v4()));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| WorkspaceError::io(&e, "mkdir", &path))?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The gzip tar of every file and directory beneath `root` (symbolic links and special
/// files are errors, as in a Workspace save); at most `max_archive_bytes` long.
pub fn pack_tree(root: &Path, limits: SnapshotLimits, max_archive_bytes: u64) -> Result<Vec<u8>> {
    let selection = Selection::new(None, &[], false)?;
    let entries = snapshot(root, &selection, limits)?;
    let scratch = Scratch::new()?;
    let out = scratch.0.join("workspace.tar.gz");
    // A Sandbox transfer is one bounded step of acquisition or release; it is not cut
    // between files (the Workspace restore/save abort covers revisions only).
    let size = write_archive(root, &entries, &out, &Cancel::new())?;
    if size > max_archive_bytes {
        return Err(WorkspaceError::range(format!(
            "Workspace transfer archive exceeded {max_archive_bytes} bytes"
        )));
    }
    fs::read(&out).map_err(|e| WorkspaceError::io(&e, "read", &out))
}

fn refused(refusal: Refused, rel: &str) -> WorkspaceError {
    match refusal {
        Refused::Unsafe => {
            WorkspaceError::error(format!("Workspace archive contains unsafe path \"{rel}\""))
        }
        Refused::Io(error, at) => WorkspaceError::io(&error, "open", &at),
    }
}

/// Every entry beneath `dir` by relative path: `true` for directories. Links are reported
/// as files (they are never followed).
fn entries(dir: &Path) -> Result<BTreeMap<String, bool>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let listing = fs::read_dir(&path).map_err(|e| WorkspaceError::io(&e, "scandir", &path))?;
        for item in listing {
            let item = item.map_err(|e| WorkspaceError::io(&e, "scandir", &path))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let kind = item
                .file_type()
                .map_err(|e| WorkspaceError::io(&e, "lstat", &item.path()))?;
            found.insert(child.clone(), kind.is_dir());
            if kind.is_dir() {
                stack.push((item.path(), child));
            }
        }
    }
    Ok(found)
}

fn remove(path: &Path, is_dir: bool) -> Result<()> {
    let removed = if is_dir {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match removed {
        Err(error) if error.kind() != io::ErrorKind::NotFound => {
            Err(WorkspaceError::io(&error, "rm", path))
        }
        _ => Ok(()),
    }
}

/// Copies `source` over `dest/rel` through an exclusive temporary beside it and a rename.
fn replace_file(source: &Path, dest: &Path, rel: &str) -> Result<()> {
    let temp_rel = match rel.rsplit_once('/') {
        Some((parent, _)) => format!("{parent}/.aml-transfer-{}", uuid::Uuid::new_v4()),
        None => format!(".aml-transfer-{}", uuid::Uuid::new_v4()),
    };
    let (mut out, temp) = create_file(dest, &temp_rel).map_err(|r| refused(r, rel))?;
    let mut input = fs::File::open(source).map_err(|e| WorkspaceError::io(&e, "open", source))?;
    let copied =
        io::copy(&mut input.by_ref(), &mut out).map_err(|e| WorkspaceError::io(&e, "write", &temp));
    let mode = input
        .metadata()
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o644);
    let finish = copied
        .and_then(|_| {
            fs::set_permissions(&temp, fs::Permissions::from_mode(mode))
                .map_err(|e| WorkspaceError::io(&e, "chmod", &temp))
        })
        .and_then(|()| {
            fs::rename(&temp, dest.join(rel)).map_err(|e| WorkspaceError::io(&e, "rename", &temp))
        });
    if finish.is_err() {
        let _ = fs::remove_file(&temp);
    }
    finish
}

/// Makes `dest` hold exactly the tree of `archive`: entries absent from it (or of another
/// kind) are removed, directories created, files replaced. The archive is fully extracted
/// and checked in scratch space first, so a refused archive changes nothing in `dest`.
pub fn mirror_archive(archive: &[u8], dest: &Path, limits: ExtractLimits) -> Result<()> {
    let scratch = Scratch::new()?;
    let file = scratch.0.join("remote.tar.gz");
    fs::write(&file, archive).map_err(|e| WorkspaceError::io(&e, "write", &file))?;
    let tree = scratch.0.join("tree");
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&tree)
        .map_err(|e| WorkspaceError::io(&e, "mkdir", &tree))?;
    extract_archive(&file, &tree, limits, &Cancel::new())?;
    let wanted = entries(&tree)?;
    let present = entries(dest)?;
    // Parents sort before children, so a removed directory's contents are skipped.
    let mut removed: Vec<&str> = Vec::new();
    for (rel, is_dir) in &present {
        if removed
            .iter()
            .any(|gone| rel.starts_with(gone) && rel.as_bytes().get(gone.len()) == Some(&b'/'))
        {
            continue;
        }
        if wanted.get(rel) != Some(is_dir) {
            remove(&dest.join(rel), *is_dir)?;
            removed.push(rel);
        }
    }
    for (rel, is_dir) in &wanted {
        if *is_dir {
            ensure_dir(dest, rel).map_err(|r| refused(r, rel))?;
        } else {
            replace_file(&tree.join(rel), dest, rel)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> (SnapshotLimits, ExtractLimits) {
        (
            SnapshotLimits {
                max_entries: 1000,
                max_bytes: 1 << 20,
                extra_entries: 0,
            },
            ExtractLimits {
                max_entries: 1000,
                max_extracted_bytes: 1 << 20,
            },
        )
    }

    #[test]
    fn packs_and_mirrors_nested_trees_with_deletions() {
        let (snap, extract) = limits();
        let remote = tempfile::tempdir().unwrap();
        fs::create_dir_all(remote.path().join("a/b/c")).unwrap();
        fs::write(remote.path().join("a/b/c/deep.txt"), "deep").unwrap();
        fs::write(remote.path().join("top.txt"), "new top").unwrap();
        let archive = pack_tree(remote.path(), snap, 1 << 20).unwrap();

        let local = tempfile::tempdir().unwrap();
        fs::write(local.path().join("top.txt"), "old").unwrap();
        fs::write(local.path().join("stale.txt"), "gone").unwrap();
        fs::create_dir_all(local.path().join("old/dir")).unwrap();
        fs::write(local.path().join("a"), "a file where a directory arrives").unwrap();
        mirror_archive(&archive, local.path(), extract).unwrap();
        let tree = entries(local.path()).unwrap();
        let names: Vec<_> = tree.keys().map(String::as_str).collect();
        assert_eq!(names, ["a", "a/b", "a/b/c", "a/b/c/deep.txt", "top.txt"]);
        assert_eq!(
            fs::read_to_string(local.path().join("top.txt")).unwrap(),
            "new top"
        );
        assert_eq!(
            fs::read_to_string(local.path().join("a/b/c/deep.txt")).unwrap(),
            "deep"
        );
    }

    #[test]
    fn a_traversal_entry_is_refused_and_changes_nothing() {
        let (_, extract) = limits();
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let mut header = tar::Header::new_gnu();
        header.set_size(4);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        // `append_data` refuses `..`; write the name bytes directly, as a hostile archive would.
        header.as_old_mut().name[..9].copy_from_slice(b"../x.txt\0");
        header.set_cksum();
        builder.append(&header, &b"evil"[..]).unwrap();
        let archive = builder.into_inner().unwrap().finish().unwrap();
        let local = tempfile::tempdir().unwrap();
        fs::write(local.path().join("keep.txt"), "kept").unwrap();
        let error = mirror_archive(&archive, local.path(), extract).unwrap_err();
        assert_eq!(
            error.message,
            "Workspace archive contains unsafe path \"../x.txt\""
        );
        assert_eq!(
            fs::read_to_string(local.path().join("keep.txt")).unwrap(),
            "kept"
        );
        assert!(!local.path().parent().unwrap().join("x.txt").exists());
    }

    #[test]
    fn archives_are_bounded() {
        let (snap, _) = limits();
        let remote = tempfile::tempdir().unwrap();
        fs::write(remote.path().join("big.bin"), vec![7u8; 4096]).unwrap();
        let error = pack_tree(remote.path(), snap, 10).unwrap_err();
        assert_eq!(
            error.message,
            "Workspace transfer archive exceeded 10 bytes"
        );
    }
}
