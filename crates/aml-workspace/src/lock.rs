//! A renewable cross-process lock with `proper-lockfile`'s on-disk protocol, so this package
//! and the TypeScript SDK exclude each other on one directory: the lock is the directory
//! `<target>.lock`, taken by an atomic `mkdir`; its holder refreshes the directory's mtime
//! every `update` (5 min); a lock whose mtime is older than `stale` (20 min) may be removed
//! and taken over. No retries for Workspace leases. The clock is injectable for tests.
//!
//! A crashed holder (issue 22): beside the directory, the holder keeps `<target>.lock.holder`,
//! its identity ([`Holder`]: host, boot id, pid namespace, pid, start time), its token and the
//! directory mtime it set (rewritten on every refresh). An acquirer on the same host takes over
//! at once a lock whose recorded holder is provably gone and whose directory still carries the
//! recorded mtime (so the record describes this very directory). The takeover is atomic among
//! takers: each claims the record by `rename` (only one rename of that file succeeds), checks
//! it claimed the dead holder's record (else puts it back with `link`, which never replaces),
//! removes the directory with `rmdir`, and then competes in the ordinary `mkdir`. The record is
//! a sibling, not a file inside the directory, so a proper-lockfile process still sees its
//! mtime protocol and can still `rmdir` a stale lock. Unknown holders (another host, a
//! TypeScript SDK process, no record) keep the staleness rule. Whatever removes another
//! holder's directory (stale, dead, or a short lock's owner died) goes through
//! [`crate::lock_aside`], which never removes a lock taken anew meanwhile.

use std::fs::{self, File, FileTimes};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::error::WorkspaceError;
use crate::lock_aside::{remove_if, with_suffix};
pub use crate::lock_record::holder_path;
use crate::lock_record::{claim_record, dead_holder, remove_dead, write_record};

pub const STALE: Duration = Duration::from_secs(20 * 60);
pub const UPDATE: Duration = Duration::from_secs(5 * 60);

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    fn now(&self) -> SystemTime;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

#[derive(Clone)]
pub struct LockPolicy {
    pub stale: Duration,
    pub update: Duration,
    pub clock: Arc<dyn Clock>,
}

impl LockPolicy {
    /// The fixed Workspace policy (5 min refresh, 20 min stale).
    pub fn workspace() -> Self {
        LockPolicy {
            stale: STALE,
            update: UPDATE,
            clock: Arc::new(SystemClock),
        }
    }
}

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockFailure {
    /// Another live holder has it (`ELOCKED`).
    Held,
    Io(io::Error, PathBuf),
}

impl LockFailure {
    pub fn into_error(self) -> WorkspaceError {
        match self {
            LockFailure::Held => WorkspaceError::error("Lock file is already being held"),
            LockFailure::Io(error, path) => WorkspaceError::io(&error, "mkdir", &path),
        }
    }
}

struct State {
    mtime: SystemTime,
    refreshed_at: SystemTime,
    compromised: Option<String>,
    released: bool,
    /// The token of our holder record, when the lock keeps one (leases, not short locks).
    record: Option<String>,
}

/// Attempts at taking over from dead holders in one acquisition (each either wins the
/// directory or finds another owner).
const DEAD_TAKEOVERS: usize = 3;

/// Times one acquisition competes again after finding the lock released under it (each time
/// someone else took it and let it go between our `mkdir` and `stat`): then it counts as held.
const RELEASED_RETRIES: usize = 16;

/// A held lock. Dropping it without [`DirLock::release`] stops the refresh but leaves the
/// directory (a crashed holder looks the same; the lock then goes stale).
pub struct DirLock {
    path: PathBuf,
    policy: LockPolicy,
    state: Arc<Mutex<State>>,
    stop: CancellationToken,
}

pub fn lock_path(target: &Path) -> PathBuf {
    with_suffix(target, ".lock")
}

fn set_mtime(path: &Path, time: SystemTime) -> io::Result<SystemTime> {
    let dir = File::open(path)?;
    dir.set_times(FileTimes::new().set_accessed(time).set_modified(time))?;
    dir.metadata()?.modified()
}

/// Whether the pid recorded in a short lock names a process that no longer exists.
fn owner_died(lock: &Path) -> bool {
    let Ok(text) = fs::read_to_string(lock.join("owner")) else {
        return false;
    };
    let Ok(pid) = text.trim().parse::<i32>() else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    pid > 0
        && unsafe { libc::kill(pid, 0) } != 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn is_stale(path: &Path, policy: &LockPolicy) -> io::Result<bool> {
    let mtime = fs::symlink_metadata(path)?.modified()?;
    Ok(mtime + policy.stale < policy.clock.now())
}

impl DirLock {
    /// Takes `<target>.lock` once: a lock whose holder is provably gone is taken over at once,
    /// a stale lock is removed and retaken, a live one is [`LockFailure::Held`]. The holder
    /// record is kept beside it (see the module documentation).
    pub fn acquire(target: &Path, policy: &LockPolicy) -> Result<DirLock, LockFailure> {
        DirLock::acquire_with(target, policy, true)
    }

    fn acquire_with(
        target: &Path,
        policy: &LockPolicy,
        record: bool,
    ) -> Result<DirLock, LockFailure> {
        let path = lock_path(target);
        let io_failure = |error: io::Error, at: &Path| LockFailure::Io(error, at.to_path_buf());
        let mut took_over = false;
        let mut dead_takeovers = 0;
        let mut released = 0;
        loop {
            match fs::create_dir(&path) {
                Ok(()) => break,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(io_failure(error, &path)),
            }
            if dead_takeovers < DEAD_TAKEOVERS {
                if let Some(dead) = dead_holder(&path) {
                    dead_takeovers += 1;
                    remove_dead(&path, &dead).map_err(|error| io_failure(error, &path))?;
                    continue;
                }
            }
            if took_over {
                return Err(LockFailure::Held);
            }
            match is_stale(&path, policy) {
                Ok(true) => {}
                Ok(false) => return Err(LockFailure::Held),
                // Released between our mkdir and stat: compete in mkdir again. Nothing is
                // removed here, since the path may already be the next holder's.
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    released += 1;
                    if released > RELEASED_RETRIES {
                        return Err(LockFailure::Held);
                    }
                    continue;
                }
                Err(error) => return Err(io_failure(error, &path)),
            }
            took_over = true;
            remove_if(&path, |aside| is_stale(aside, policy).unwrap_or(false))
                .map_err(|error| io_failure(error, &path))?;
        }
        let now = policy.clock.now();
        let mtime = match set_mtime(&path, now) {
            Ok(mtime) => mtime,
            Err(error) => {
                let _ = fs::remove_dir(&path);
                return Err(io_failure(error, &path));
            }
        };
        let record = record.then(|| uuid::Uuid::new_v4().to_string());
        if let Some(token) = &record {
            write_record(&path, token, mtime);
        }
        Ok(DirLock {
            path,
            policy: policy.clone(),
            state: Arc::new(Mutex::new(State {
                mtime,
                refreshed_at: now,
                compromised: None,
                released: false,
                record,
            })),
            stop: CancellationToken::new(),
        })
    }

    /// The short lock around a compare-and-swap, held for milliseconds: waits (up to
    /// `patience`) for a live holder, records its pid in `<lock>/owner`, and takes over at once
    /// from a holder that died (a same-host store), else after `policy.stale`. Not part of
    /// the proper-lockfile protocol (only this package takes these locks).
    pub async fn acquire_patiently(
        target: &Path,
        policy: &LockPolicy,
        patience: Duration,
    ) -> Result<DirLock, LockFailure> {
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match DirLock::acquire_with(target, policy, false) {
                Ok(lock) => {
                    let _ = fs::write(lock.path.join("owner"), std::process::id().to_string());
                    // A new entry moves the directory's mtime, which is how ownership is
                    // checked: stamp it again so release() still recognises the lock as ours.
                    if let Err(error) = lock.restamp() {
                        let _ = fs::remove_dir_all(&lock.path);
                        return Err(LockFailure::Io(error, lock.path.clone()));
                    }
                    return Ok(lock);
                }
                Err(LockFailure::Held) if owner_died(&lock_path(target)) => {
                    remove_if(&lock_path(target), owner_died)
                        .map_err(|error| LockFailure::Io(error, lock_path(target)))?;
                }
                Err(LockFailure::Held) if started.elapsed() < patience => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets the lock's mtime anew and records it as ours.
    fn restamp(&self) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.mtime = set_mtime(&self.path, self.policy.clock.now())?;
        Ok(())
    }

    /// Refreshes the lock every `update` on the current tokio runtime (if any) until release.
    pub fn start_refresh(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (path, policy, state, stop) = (
            self.path.clone(),
            self.policy.clone(),
            self.state.clone(),
            self.stop.clone(),
        );
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(policy.update) => {}
                }
                if refresh(&path, &policy, &state).is_err() {
                    return;
                }
            }
        });
    }

    /// One refresh step (what the timer does): checks the lock is still ours and renews it.
    pub fn refresh(&self) -> Result<(), String> {
        refresh(&self.path, &self.policy, &self.state)
    }

    /// Why the lock was lost, if it was.
    pub fn compromised(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .compromised
            .clone()
    }

    /// Checks ownership now (without renewing): the lock directory must still carry our mtime.
    pub fn check(&self) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reason) = &state.compromised {
            return Err(reason.clone());
        }
        match fs::symlink_metadata(&self.path).and_then(|m| m.modified()) {
            Ok(mtime) if mtime == state.mtime => Ok(()),
            Ok(_) => Err(compromise(&mut state, "Lock was updated by another holder")),
            Err(_) => Err(compromise(&mut state, "Lock was removed by another holder")),
        }
    }

    /// Stops refreshing and removes the lock directory. A compromised lock is not removed (it
    /// belongs to someone else now) and reports why it was lost.
    pub fn release(&self) -> Result<(), ReleaseFailure> {
        self.stop.cancel();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.released {
            return Err(ReleaseFailure::NotHeld);
        }
        state.released = true;
        if let Some(reason) = &state.compromised {
            return Err(ReleaseFailure::Compromised(reason.clone()));
        }
        match fs::symlink_metadata(&self.path).and_then(|m| m.modified()) {
            Ok(mtime) if mtime == state.mtime => {}
            Ok(_) => {
                return Err(ReleaseFailure::Compromised(
                    "Lock was updated by another holder".into(),
                ))
            }
            Err(_) => {
                return Err(ReleaseFailure::Compromised(
                    "Lock was removed by another holder".into(),
                ))
            }
        }
        fs::remove_dir_all(&self.path)
            .map_err(|error| ReleaseFailure::Io(WorkspaceError::io(&error, "rmdir", &self.path)))?;
        // Our record goes after the directory: a crash in between leaves a record that no
        // directory matches, which nobody trusts.
        if let Some(token) = &state.record {
            if let Ok(Some(claim)) = claim_record(&self.path, token) {
                let _ = fs::remove_file(claim);
            }
        }
        Ok(())
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[derive(Debug)]
pub enum ReleaseFailure {
    NotHeld,
    Compromised(String),
    Io(WorkspaceError),
}

fn compromise(state: &mut State, reason: &str) -> String {
    state
        .compromised
        .get_or_insert_with(|| reason.to_string())
        .clone()
}

fn refresh(path: &Path, policy: &LockPolicy, state: &Mutex<State>) -> Result<(), String> {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(reason) = &state.compromised {
        return Err(reason.clone());
    }
    if state.released {
        return Ok(());
    }
    let now = policy.clock.now();
    if state.refreshed_at + policy.stale < now {
        return Err(compromise(
            &mut state,
            "Unable to update lock within the stale threshold",
        ));
    }
    match fs::symlink_metadata(path).and_then(|m| m.modified()) {
        Ok(mtime) if mtime == state.mtime => {}
        Ok(_) => return Err(compromise(&mut state, "Lock was updated by another holder")),
        Err(_) => return Err(compromise(&mut state, "Lock was removed by another holder")),
    }
    match set_mtime(path, now) {
        Ok(mtime) => {
            state.mtime = mtime;
            state.refreshed_at = now;
            if let Some(token) = &state.record {
                write_record(path, token, mtime);
            }
            Ok(())
        }
        Err(error) => Err(compromise(
            &mut state,
            &format!("Lock could not be updated: {error}"),
        )),
    }
}
