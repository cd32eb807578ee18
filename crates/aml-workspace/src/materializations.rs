//! Materialization directories `<temporaryDirectory>/aml-workspace-XXXXXX` of dead
//! processes. Each records its owner in `owner.json` (a [`Holder`]) right after it is made;
//! every acquisition then removes, beneath the same temporary directory, the ones whose owner
//! is provably gone (the lock takeover's rule), at most `budget` entries per acquisition.
//! `owner.json` goes last, so a removal the budget cut short is finished by a later one.
//!
//! Never touched: a materialization of a live process (this one included), one whose owner
//! is another host, boot or pid namespace, and one without `owner.json` (the TypeScript SDK's,
//! or this package's on a system without `/proc`) — except an *empty* one older than
//! [`ORPHAN_STALE`], which is what a process killed between `mkdir` and writing its record
//! leaves (a live one is never empty for long: its `workspace` directory follows at once).

use std::fs;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use crate::holder::{Holder, Liveness};
use crate::owners::ORPHAN_STALE;

/// The prefix of every materialization root.
pub const ROOT_PREFIX: &str = "aml-workspace-";
/// The owner record inside a root.
pub const OWNER_FILE: &str = "owner.json";

/// Records this process as the owner of the new root `root`. Best effort: without a record
/// the root is merely never swept.
pub fn record_owner(root: &Path) {
    if let Some(holder) = Holder::current() {
        let json = serde_json::to_vec(holder).expect("a holder serializes");
        let _ = fs::write(root.join(OWNER_FILE), json);
    }
}

fn owner_of(root: &Path) -> Option<Holder> {
    serde_json::from_slice(&fs::read(root.join(OWNER_FILE)).ok()?).ok()
}

/// What one sweep of a temporary directory removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MaterializationSweep {
    /// Roots removed completely.
    pub roots: usize,
    /// Entries (files and directories) removed.
    pub entries: usize,
    /// Whether the budget ran out first.
    pub exhausted: bool,
}

/// Removes the abandoned materializations beneath `parent` except `own`, spending at most
/// `budget` entry removals.
pub fn sweep(parent: &Path, own: &Path, budget: usize) -> MaterializationSweep {
    let mut report = MaterializationSweep::default();
    let Ok(entries) = fs::read_dir(parent) else {
        return report;
    };
    let mut left = budget;
    for entry in entries.flatten() {
        let root = entry.path();
        if !entry.file_name().to_string_lossy().starts_with(ROOT_PREFIX) || root == own {
            continue;
        }
        // Not following links: a root is a directory this package made.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let removable = match owner_of(&root) {
            Some(holder) => holder.liveness() == Liveness::Gone,
            None => is_old_and_empty(&root),
        };
        if !removable {
            continue;
        }
        if left == 0 {
            report.exhausted = true;
            break;
        }
        let before = left;
        let complete = remove_within(&root, true, &mut left);
        report.entries += before - left;
        if complete {
            report.roots += 1;
        } else if left == 0 {
            report.exhausted = true;
            break;
        }
        // Otherwise something in it could not be removed: left for the next sweep.
    }
    report
}

fn is_old_and_empty(root: &Path) -> bool {
    let old = fs::symlink_metadata(root)
        .and_then(|meta| meta.modified())
        .is_ok_and(|mtime| mtime + ORPHAN_STALE < SystemTime::now());
    old && fs::read_dir(root).is_ok_and(|mut entries| entries.next().is_none())
}

/// Removes `dir` and what it holds, one budget unit per entry, and reports whether it is
/// gone. At the top (`top`), `owner.json` is removed only once everything else is.
fn remove_within(dir: &Path, top: bool, left: &mut usize) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let mut complete = true;
    for entry in entries.flatten() {
        if top && entry.file_name() == OWNER_FILE {
            continue;
        }
        if *left == 0 {
            return false;
        }
        let path = entry.path();
        let removed = if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            remove_within(&path, false, left)
        } else {
            *left -= 1;
            gone(fs::remove_file(&path))
        };
        complete &= removed;
    }
    if !complete || *left == 0 {
        return false;
    }
    if top && !gone(fs::remove_file(dir.join(OWNER_FILE))) {
        return false;
    }
    *left -= 1;
    gone(fs::remove_dir(dir))
}

fn gone(result: io::Result<()>) -> bool {
    match result {
        Ok(()) => true,
        Err(error) => error.kind() == io::ErrorKind::NotFound,
    }
}
