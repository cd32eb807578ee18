//! The store sweep a save runs after it published: removes what killed saves left behind —
//! revisions no index references whose owner record ([`crate::owners`]) is abandoned, those
//! records, and the store's own scratch files ([`StorageLease::sweep_scratch`]) — at most
//! `budget` deletions per save, so a large backlog is cleaned over several saves and never
//! holds one save up for long.
//!
//! Why it is safe against live writers: a save writes its owner record before its first
//! upload, and the sweep lists `revisions/` before `owners/`, so any upload it sees has its
//! record in the second listing; a record of a live process of this machine protects its
//! revisions however old. The index it compares against is the one this save has just
//! published (a publication is conditional, so it was the newest), and a revision that falls
//! out of the newest index never comes back. An unreferenced revision without a record (an
//! older writer's, the TypeScript SDK's, or one from before owner records) is not touched at
//! once: the sweep writes a sighting record for it, and removes it only once that is older
//! than [`crate::owners::ORPHAN_STALE`] and the revision is still unreferenced.

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use crate::error::Result;
use crate::index::{is_revision_id, WorkspaceIndex};
use crate::owners::{self, OwnerRecord, OWNERS_PREFIX};
use crate::storage::{StorageLease, WriteCondition};

/// Deletions one save may spend on the sweep by default (objects, scratch files, records).
/// Why 100,000: the issue-22 probe (100 folder saves of 2,000 files SIGKILLed) leaves ~66,000
/// files, and one save must clean that; the bound still caps a save's worst case (about
/// 5 s of unlinks on a loaded 2-core machine) however large a backlog grows.
pub const DEFAULT_SWEEP_BUDGET: usize = 100_000;

/// What one sweep did (for tests and the fault benchmark).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Objects of unreferenced revisions deleted.
    pub objects: usize,
    /// Unreferenced revisions removed completely.
    pub revisions: usize,
    /// Owner records deleted (their revisions are published or gone).
    pub records: usize,
    /// Scratch files removed (the filesystem store's `.aml-tmp-*`).
    pub scratch: usize,
    /// Sighting records written for unclaimed revisions.
    pub sightings: usize,
    /// Whether the budget ran out before everything abandoned was removed.
    pub exhausted: bool,
}

/// `revisions/<id>.tar.gz` and `revisions/<id>/…` grouped by revision id.
fn revisions_in(paths: Vec<String>) -> BTreeMap<String, Vec<String>> {
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in paths {
        let Some(rest) = path.strip_prefix("revisions/") else {
            continue;
        };
        let id = match rest.split_once('/') {
            Some((id, _)) => id,
            None => match rest.strip_suffix(".tar.gz") {
                Some(id) => id,
                None => continue,
            },
        };
        if is_revision_id(id) {
            by_id.entry(id.to_string()).or_default().push(path);
        }
    }
    by_id
}

struct Budget(usize);

impl Budget {
    fn take(&mut self, wanted: usize) -> usize {
        let granted = wanted.min(self.0);
        self.0 -= granted;
        granted
    }
}

/// Sweeps `lease` against `index` (just published) with at most `budget` deletions.
pub async fn sweep(
    lease: &dyn StorageLease,
    index: &WorkspaceIndex,
    budget: usize,
) -> Result<SweepReport> {
    let mut report = SweepReport::default();
    let mut budget = Budget(budget);
    report.scratch = lease.sweep_scratch(budget.0).await?;
    budget.take(report.scratch);
    // `revisions/` first, then `owners/`: see the module documentation.
    let mut stored = revisions_in(lease.list("revisions/").await?);
    let record_paths = lease.list(OWNERS_PREFIX).await?;
    let referenced: BTreeSet<&str> = index.revisions.iter().map(|r| r.id.as_str()).collect();
    let now = SystemTime::now();
    let mut claimed: BTreeSet<String> = BTreeSet::new();
    let mut protected: BTreeSet<String> = BTreeSet::new();
    let mut abandoned: Vec<(String, OwnerRecord)> = Vec::new();
    for path in record_paths {
        let Some(record) = owners::read(lease, &path).await? else {
            continue;
        };
        claimed.extend(record.revisions.iter().cloned());
        if record.is_abandoned(now) {
            abandoned.push((path, record));
        } else {
            protected.extend(record.revisions.iter().cloned());
        }
    }
    for (path, record) in abandoned {
        let mut complete = true;
        for id in &record.revisions {
            if referenced.contains(id.as_str()) || protected.contains(id) {
                continue;
            }
            let objects = stored.remove(id).unwrap_or_default();
            let granted = budget.take(objects.len());
            lease.delete(&objects[..granted]).await?;
            report.objects += granted;
            if granted < objects.len() {
                complete = false;
                break;
            }
            // A folder upload killed between `mkdir` and its first file leaves directories
            // without objects, which no listing shows.
            lease
                .remove_empty_directories(&crate::folder::prefix(id))
                .await?;
            if !objects.is_empty() {
                report.revisions += 1;
            }
        }
        if !complete || budget.take(1) == 0 {
            report.exhausted = true;
            return Ok(report);
        }
        lease.delete(std::slice::from_ref(&path)).await?;
        report.records += 1;
    }
    // Unclaimed and unreferenced: date it now, remove it after `ORPHAN_STALE`.
    for id in stored.keys() {
        if referenced.contains(id.as_str()) || claimed.contains(id) {
            continue;
        }
        if budget.take(1) == 0 {
            report.exhausted = true;
            break;
        }
        let sighting = OwnerRecord::sighting(id);
        // Create-only: a racing save's own record (same id) is never replaced.
        if owners::write(lease, id, &sighting, WriteCondition::Absent)
            .await
            .is_ok()
        {
            report.sightings += 1;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_both_formats_and_ignores_the_rest() {
        let grouped = revisions_in(
            [
                "revisions/a.tar.gz",
                "revisions/b/manifest.json",
                "revisions/b/files/x",
                "revisions/notes.txt",
                "workspace.json",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(grouped.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(grouped["b"].len(), 2);
    }
}
