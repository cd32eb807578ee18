//! Owner records `owners/<id>.json`: who is writing (or pruning) unpublished revisions, so a
//! later save can tell a killed save's leftovers from a live save's uploads. A save writes
//! its record before it uploads anything and deletes it once the revision is published (or
//! cleaned up); a record therefore outlives its save only when the save was killed. Revision
//! objects themselves carry no owner (a store's listing gives paths only), hence the record.
//!
//! `{holder, startedAt, revisions}`: the [`Holder`] (`null` when this process cannot name
//! itself, and for a *sighting*: a record the sweep writes for an unreferenced revision
//! nobody claimed, to date it), milliseconds since the epoch, and the revision ids it covers.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::holder::{Holder, Liveness};
use crate::storage::{Limited, StorageLease, WriteBody, WriteCondition, WriteOptions};

pub const OWNERS_PREFIX: &str = "owners/";
/// How long a record whose holder cannot be proven alive or gone (another host, a sighting)
/// protects its revisions. Ten times a normal save's worst case and three times the lock's
/// staleness window: nothing this package writes takes that long without being dead.
pub const ORPHAN_STALE: Duration = Duration::from_secs(60 * 60);
/// Records are a few hundred bytes; anything larger is not ours.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerRecord {
    pub holder: Option<Holder>,
    pub started_at: u64,
    pub revisions: Vec<String>,
}

pub fn record_path(id: &str) -> String {
    format!("{OWNERS_PREFIX}{id}.json")
}

/// The revision id a record path names, if it is one.
pub fn id_of(path: &str) -> Option<&str> {
    path.strip_prefix(OWNERS_PREFIX)?.strip_suffix(".json")
}

pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

impl OwnerRecord {
    /// A record for this process, now.
    pub fn ours(revisions: Vec<String>) -> Self {
        OwnerRecord {
            holder: Holder::current().cloned(),
            started_at: millis(SystemTime::now()),
            revisions,
        }
    }

    /// A sighting of an unclaimed revision, now.
    pub fn sighting(id: &str) -> Self {
        OwnerRecord {
            holder: None,
            started_at: millis(SystemTime::now()),
            revisions: vec![id.to_string()],
        }
    }

    /// Whether nobody can still be using the revisions: the holder is provably gone, or it
    /// is unknown (or absent) and the record is older than [`ORPHAN_STALE`]. A live holder
    /// of this machine protects its revisions however long its save takes.
    pub fn is_abandoned(&self, now: SystemTime) -> bool {
        let old = millis(now).saturating_sub(self.started_at) > ORPHAN_STALE.as_millis() as u64;
        match self.holder.as_ref().map(Holder::liveness) {
            Some(Liveness::Gone) => true,
            Some(Liveness::Alive) => false,
            Some(Liveness::Unknown) | None => old,
        }
    }
}

/// Writes `record` at `owners/<id>.json` (`condition` `Absent` for a sighting, so a save's own
/// record is never replaced by one).
pub async fn write(
    lease: &dyn StorageLease,
    id: &str,
    record: &OwnerRecord,
    condition: WriteCondition,
) -> Result<()> {
    let bytes = serde_json::to_vec(record).expect("an owner record serializes");
    let mut options = WriteOptions::new(condition);
    options.content_type = Some("application/json".into());
    options.content_length = Some(bytes.len() as u64);
    lease
        .write(&record_path(id), WriteBody::Bytes(bytes), options)
        .await
        .map(|_| ())
}

/// The record at `path`, `None` when it is gone or is not a record of ours.
pub async fn read(lease: &dyn StorageLease, path: &str) -> Result<Option<OwnerRecord>> {
    let Some(object) = lease.read(path, MAX_RECORD_BYTES).await? else {
        return Ok(None);
    };
    Ok(match object.body.collect(MAX_RECORD_BYTES).await? {
        Limited::Within(bytes) => serde_json::from_slice(&bytes).ok(),
        Limited::Exceeded => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_abandoned_what() {
        let now = SystemTime::now();
        let young = millis(now);
        let old = young - ORPHAN_STALE.as_millis() as u64 - 1;
        let me = Holder::current().unwrap().clone();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = Holder {
            pid: child.id(),
            ..me.clone()
        };
        child.wait().unwrap();
        let elsewhere = Holder {
            hostname: "elsewhere".into(),
            ..me.clone()
        };
        let record = |holder: Option<Holder>, started_at| OwnerRecord {
            holder,
            started_at,
            revisions: vec![],
        };
        assert!(!record(Some(me.clone()), old).is_abandoned(now));
        assert!(record(Some(dead), young).is_abandoned(now));
        assert!(!record(Some(elsewhere.clone()), young).is_abandoned(now));
        assert!(record(Some(elsewhere), old).is_abandoned(now));
        assert!(!record(None, young).is_abandoned(now));
        assert!(record(None, old).is_abandoned(now));
    }

    #[test]
    fn paths() {
        assert_eq!(record_path("r1"), "owners/r1.json");
        assert_eq!(id_of("owners/r1.json"), Some("r1"));
        assert_eq!(id_of("revisions/r1.json"), None);
    }
}
