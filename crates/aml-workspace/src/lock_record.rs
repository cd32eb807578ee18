//! The holder record of a directory lock, `<target>.lock.holder` (see [`crate::lock`]): who
//! holds it, its token and the directory mtime it set; and the atomic takeover from a holder
//! that is provably gone (claim the record by `rename`, check, `rmdir`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::holder::Holder;
use crate::lock_aside::{remove_if, with_suffix};

/// `<target>.lock.holder`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HolderRecord {
    token: String,
    holder: Holder,
    /// The lock directory's mtime as the holder last set it: seconds and nanoseconds since
    /// the epoch.
    mtime: (u64, u32),
}

/// Where the holder record of the lock directory `lock` lives.
pub fn holder_path(lock: &Path) -> PathBuf {
    with_suffix(lock, ".holder")
}

fn stamp(time: SystemTime) -> (u64, u32) {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_secs(), since.subsec_nanos())
}

fn mtime_of(path: &Path) -> io::Result<SystemTime> {
    fs::symlink_metadata(path)?.modified()
}

fn read_record(path: &Path) -> Option<HolderRecord> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Writes our record atomically (temporary file, then `rename` over the old one). Best effort:
/// without a record the lock is merely "unknown" to others, as before.
pub(crate) fn write_record(lock: &Path, token: &str, mtime: SystemTime) {
    let Some(holder) = Holder::current() else {
        return;
    };
    let record = HolderRecord {
        token: token.to_string(),
        holder: holder.clone(),
        mtime: stamp(mtime),
    };
    let target = holder_path(lock);
    let temporary = with_suffix(&target, &format!(".tmp-{token}"));
    let written = serde_json::to_vec(&record)
        .map_err(io::Error::other)
        .and_then(|json| fs::write(&temporary, json))
        .and_then(|()| fs::rename(&temporary, &target));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
}

/// Moves the record at `holder_path(lock)` aside and returns it with its private name when it
/// carries `token`; otherwise puts it back (unless a newer record appeared meanwhile).
pub(crate) fn claim_record(lock: &Path, token: &str) -> io::Result<Option<PathBuf>> {
    let record = holder_path(lock);
    let claim = with_suffix(&record, &format!(".claim-{}", uuid::Uuid::new_v4()));
    match fs::rename(&record, &claim) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    }
    if read_record(&claim).is_some_and(|claimed| claimed.token == token) {
        return Ok(Some(claim));
    }
    // Another holder's record: give it back. `link` fails if a newer record took its place.
    let _ = fs::hard_link(&claim, &record);
    let _ = fs::remove_file(&claim);
    Ok(None)
}

/// The record of `lock` when it describes this very directory and its holder is gone.
pub(crate) fn dead_holder(lock: &Path) -> Option<HolderRecord> {
    let record = read_record(&holder_path(lock))?;
    let mtime = mtime_of(lock).ok()?;
    (stamp(mtime) == record.mtime && record.holder.is_gone()).then_some(record)
}

/// Removes the lock directory of the dead holder `dead`, or leaves everything to whoever got
/// there first: only the taker whose `rename` claimed the dead record goes on, and it removes
/// the directory only if it still carries the dead holder's mtime once moved aside.
pub(crate) fn remove_dead(lock: &Path, dead: &HolderRecord) -> io::Result<()> {
    let Some(claim) = claim_record(lock, &dead.token)? else {
        return Ok(());
    };
    let outcome = remove_if(lock, |aside| {
        mtime_of(aside).is_ok_and(|mtime| stamp(mtime) == dead.mtime)
    });
    let _ = fs::remove_file(&claim);
    outcome
}
