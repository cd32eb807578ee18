//! The filesystem store's scratch files: every write stages `.aml-tmp-<tag>-<uuid>` beside its
//! target and renames or links it into place, so a writer killed in between leaves one.
//! `<tag>` is the writer's [`Holder::tag`], so the sweep can prove the writer gone; a scratch
//! file without a tag of this machine (the TypeScript SDK's, another host's) is removed only
//! once untouched for [`ORPHAN_STALE`]. A live writer's scratch file is never removed.
//!
//! Where they can be: beside `workspace.json` (the identity root), beside owner records
//! (`owners/`), beside archives (`revisions/`) and beside folder manifests
//! (`revisions/<id>/`); folder revision files are created in place.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use crate::holder::{Holder, Liveness};
use crate::owners::ORPHAN_STALE;

/// Temporary files start with this; listings skip them.
pub const TEMP_PREFIX: &str = ".aml-tmp-";

/// A new scratch file name for this process.
pub fn scratch_name() -> String {
    let unique = uuid::Uuid::new_v4().simple();
    match Holder::current() {
        Some(holder) => format!("{TEMP_PREFIX}{}-{unique}", holder.tag()),
        None => format!("{TEMP_PREFIX}{unique}"),
    }
}

fn is_abandoned(name: &str, path: &Path, now: SystemTime) -> bool {
    let rest = &name[TEMP_PREFIX.len()..];
    let writer = rest
        .rsplit_once('-')
        .and_then(|(tag, _)| Holder::of_tag(tag));
    match writer.as_ref().map(Holder::liveness) {
        Some(Liveness::Gone) => true,
        Some(Liveness::Alive) => false,
        Some(Liveness::Unknown) | None => fs::symlink_metadata(path)
            .and_then(|meta| meta.modified())
            .is_ok_and(|mtime| mtime + ORPHAN_STALE < now),
    }
}

/// Removes at most `budget` abandoned scratch files of the identity at `root`.
pub fn sweep(root: &Path, budget: usize) -> usize {
    let now = SystemTime::now();
    let mut removed = 0;
    let revisions = root.join("revisions");
    let folders = fs::read_dir(&revisions)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path());
    let dirs = [root.to_path_buf(), root.join("owners"), revisions.clone()];
    for dir in dirs.into_iter().chain(folders) {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if removed == budget {
                return removed;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| n.starts_with(TEMP_PREFIX)) else {
                continue;
            };
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_file())
                && is_abandoned(name, &path, now)
                && fs::remove_file(&path).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

/// Removes `dir` and the directories beneath it that hold no file (`rmdir` only: a file
/// anywhere keeps its directory and every one above it).
pub fn remove_empty_tree(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let mut empty = true;
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        empty &= is_dir && remove_empty_tree(&entry.path());
    }
    empty && fs::remove_dir(dir).is_ok()
}
