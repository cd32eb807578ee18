//! The proper-lockfile protocol: atomic mkdir, staleness by mtime, refresh, compromise.
use std::fs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aml_workspace::lock::{lock_path, STALE, UPDATE};
use aml_workspace::{Clock, DirLock, LockFailure, LockPolicy, ReleaseFailure};

/// A clock the test moves by hand.
struct FakeClock(AtomicU64);

impl FakeClock {
    fn at(secs: u64) -> Arc<Self> {
        Arc::new(FakeClock(AtomicU64::new(secs)))
    }
    fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_secs(), Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
}

fn policy(clock: Arc<FakeClock>) -> LockPolicy {
    LockPolicy {
        stale: STALE,
        update: UPDATE,
        clock,
    }
}

#[test]
fn mkdir_excludes_and_release_frees() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    fs::create_dir(&target).unwrap();
    let clock = FakeClock::at(1_800_000_000);
    let held = DirLock::acquire(&target, &policy(clock.clone())).unwrap();
    assert_eq!(held.path(), lock_path(&target));
    assert!(dir.path().join("ws.lock").is_dir());
    assert!(matches!(
        DirLock::acquire(&target, &policy(clock.clone())),
        Err(LockFailure::Held)
    ));
    held.release().unwrap();
    assert!(!dir.path().join("ws.lock").exists());
    assert!(matches!(held.release(), Err(ReleaseFailure::NotHeld)));
    DirLock::acquire(&target, &policy(clock))
        .unwrap()
        .release()
        .unwrap();
}

#[test]
fn a_foreign_lock_directory_is_respected_until_stale() {
    // What a TypeScript SDK process leaves: a bare directory whose mtime it refreshes.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    fs::create_dir(dir.path().join("ws.lock")).unwrap();
    let mtime = fs::metadata(dir.path().join("ws.lock"))
        .unwrap()
        .modified()
        .unwrap();
    let secs = mtime.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let clock = FakeClock::at(secs + 19 * 60);
    assert!(matches!(
        DirLock::acquire(&target, &policy(clock.clone())),
        Err(LockFailure::Held)
    ));
    clock.advance(Duration::from_secs(2 * 60));
    let taken = DirLock::acquire(&target, &policy(clock)).expect("a stale lock is taken over");
    taken.release().unwrap();
}

#[test]
fn refresh_renews_and_detects_compromise() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    let clock = FakeClock::at(1_800_000_000);
    let held = DirLock::acquire(&target, &policy(clock.clone())).unwrap();
    clock.advance(UPDATE);
    held.refresh().unwrap();
    let mtime = fs::metadata(held.path()).unwrap().modified().unwrap();
    assert_eq!(mtime, clock.now(), "the refresh moved the mtime to now");
    // Another process takes the lock over (as if ours had gone stale) and touches it.
    let later = SystemTime::now() + Duration::from_secs(3600);
    fs::File::open(held.path())
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(held.check().is_err());
    assert!(held.compromised().is_some());
    assert!(matches!(
        held.release(),
        Err(ReleaseFailure::Compromised(_))
    ));
    assert!(
        held.path().exists(),
        "a compromised lock is left to its new owner"
    );
}

#[test]
fn a_holder_that_missed_its_refreshes_is_compromised() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    let clock = FakeClock::at(1_800_000_000);
    let held = DirLock::acquire(&target, &policy(clock.clone())).unwrap();
    clock.advance(STALE + Duration::from_secs(1));
    assert_eq!(
        held.refresh().unwrap_err(),
        "Unable to update lock within the stale threshold"
    );
}

/// The short compare-and-swap lock writes its owner file into the lock directory, which
/// moves the directory's mtime; it must still be released (not left behind as "compromised").
#[tokio::test]
async fn a_patient_lock_with_its_owner_file_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("object");
    // A real clock: the owner file's creation stamps the directory with the current time.
    let policy = LockPolicy {
        stale: STALE,
        update: UPDATE,
        clock: Arc::new(aml_workspace::SystemClock),
    };
    for _ in 0..20 {
        let lock = DirLock::acquire_patiently(&target, &policy, Duration::from_secs(5))
            .await
            .unwrap();
        assert!(lock_path(&target).join("owner").is_file());
        lock.release().unwrap();
        assert!(!lock_path(&target).exists());
    }
}
