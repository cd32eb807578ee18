//! A crashed lock holder (issue 22 item 4): a `<target>.lock` whose holder process was
//! SIGKILLed is taken over by the first acquisition on this host, not after 20 minutes, and
//! of two racing takers exactly one wins. The holder is a real child process (this test
//! binary, re-run as `holder_process`). Unknown holders keep the staleness rule.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use aml_workspace::holder::Holder;
use aml_workspace::lock::{holder_path, lock_path};
use aml_workspace::{DirLock, LockFailure, LockPolicy};

const HOLD: &str = "AML_TEST_HOLD_LOCK";

/// The holder process when run with `AML_TEST_HOLD_LOCK=<target>` (a no-op test otherwise):
/// takes the lock, says so, and waits to be killed.
#[test]
fn holder_process() {
    let Ok(target) = std::env::var(HOLD) else {
        return;
    };
    let lock = DirLock::acquire(Path::new(&target), &LockPolicy::workspace());
    assert!(lock.is_ok(), "the holder could not take the lock");
    println!("AML-HELD");
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// A child process holding the lock on `target` (it has said so).
fn spawn_holder(target: &Path) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "holder_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOLD, target)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().contains("AML-HELD") {
            return child;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the holder process exited without taking the lock");
}

/// Blocks until `child` has exited, leaving it a zombie (`waitid` with `WNOWAIT`).
fn wait_without_reaping(child: &Child) {
    // SAFETY: waitid only writes the zeroed siginfo_t it is given.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let id = child.id() as libc::id_t;
    let flags = libc::WEXITED | libc::WNOWAIT;
    assert_eq!(
        unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) },
        0
    );
}

fn held(outcome: &Result<DirLock, LockFailure>) -> bool {
    matches!(outcome, Err(LockFailure::Held))
}

#[test]
fn a_sigkilled_holder_is_taken_over_at_once_by_exactly_one_of_two_takers() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    std::fs::create_dir(&target).unwrap();
    let policy = LockPolicy::workspace();
    for round in 0..100 {
        let mut child = spawn_holder(&target);
        // A live holder excludes; a proper-lockfile process sees a plain, empty lock
        // directory (it could still rmdir it once stale) and the record sits beside it.
        assert!(held(&DirLock::acquire(&target, &policy)), "round {round}");
        assert_eq!(
            std::fs::read_dir(lock_path(&target)).unwrap().count(),
            0,
            "round {round}"
        );
        assert!(holder_path(&lock_path(&target)).is_file(), "round {round}");
        child.kill().unwrap();
        // Half the rounds take over from a reaped holder, half from an unreaped zombie (the
        // kill has landed, but nobody has waited for it).
        if round % 2 == 0 {
            child.wait().unwrap();
        } else {
            wait_without_reaping(&child);
        }
        // Each taker makes exactly one acquisition attempt.
        let start = Arc::new(Barrier::new(2));
        let takers: Vec<_> = (0..2)
            .map(|_| {
                let (start, target, policy) = (start.clone(), target.clone(), policy.clone());
                std::thread::spawn(move || {
                    start.wait();
                    DirLock::acquire(&target, &policy)
                })
            })
            .collect();
        let outcomes: Vec<_> = takers.into_iter().map(|t| t.join().unwrap()).collect();
        let shown: Vec<_> = outcomes.iter().map(|o| o.as_ref().err()).collect();
        let winners = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(winners, 1, "round {round}: {shown:?}");
        assert!(outcomes.iter().any(held), "round {round}: {shown:?}");
        let lock = outcomes.into_iter().find_map(Result::ok).unwrap();
        lock.check().unwrap();
        lock.release().unwrap();
        assert!(!lock_path(&target).exists(), "round {round}");
        assert!(!holder_path(&lock_path(&target)).exists(), "round {round}");
        let _ = child.wait();
    }
}

/// Writes the record a holder keeps beside `<target>.lock`, for the directory as it is now.
fn record(target: &Path, holder: &Holder) {
    let lock = lock_path(target);
    let mtime = std::fs::metadata(&lock)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let value = serde_json::json!({
        "token": "recorded",
        "holder": holder,
        "mtime": [mtime.as_secs(), mtime.subsec_nanos()],
    });
    std::fs::write(holder_path(&lock), value.to_string()).unwrap();
}

#[test]
fn unknown_holders_keep_the_staleness_rule() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ws");
    std::fs::create_dir(&target).unwrap();
    let policy = LockPolicy::workspace();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = Holder {
        pid: gone.id(),
        ..Holder::current().unwrap().clone()
    };
    gone.wait().unwrap();
    // What a TypeScript SDK process leaves: a bare directory, no record.
    std::fs::create_dir(lock_path(&target)).unwrap();
    assert!(held(&DirLock::acquire(&target, &policy)));
    // Dead holders of other hosts, boots and pid namespaces are unknown here.
    for other in [
        Holder {
            hostname: format!("{}-elsewhere", dead.hostname),
            ..dead.clone()
        },
        Holder {
            boot_id: "another-boot".into(),
            ..dead.clone()
        },
        Holder {
            pid_namespace: "pid:[1]".into(),
            ..dead.clone()
        },
    ] {
        record(&target, &other);
        assert!(held(&DirLock::acquire(&target, &policy)), "{other:?}");
    }
    // A dead holder's record that does not describe this directory (it was replaced since,
    // e.g. by a TypeScript SDK process after the staleness window) is no proof either.
    record(&target, &dead);
    let later = std::fs::metadata(lock_path(&target))
        .unwrap()
        .modified()
        .unwrap()
        + Duration::from_secs(1);
    let directory = std::fs::File::open(lock_path(&target)).unwrap();
    directory
        .set_times(std::fs::FileTimes::new().set_modified(later))
        .unwrap();
    assert!(held(&DirLock::acquire(&target, &policy)));
    // The same record, matching the directory: taken over at once.
    record(&target, &dead);
    DirLock::acquire(&target, &policy)
        .unwrap()
        .release()
        .unwrap();
}
