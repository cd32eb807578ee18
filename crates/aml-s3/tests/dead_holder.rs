//! A crashed lock holder (issue 22): a `lock.json` whose recorded holder was a process of this
//! host that is gone (SIGKILLed) is taken over at once, not after 20 minutes; of two takers
//! exactly one wins (the `If-Match` replacement). Over an in-memory bucket with S3's
//! conditional-write semantics; the same requests are proven against moto in `tests/moto`.

mod support;

use std::process::{Child, Command};
use std::sync::Arc;

use aml_s3::{S3WorkspaceStorage, StorageError, DEFAULT_PREFIX};
use aml_workspace::holder::Holder;
use bytes::Bytes;
use support::bucket::Bucket;

const LOCK: &str = "aml/workspaces/ws/lock.json";

fn now_iso() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A fresh lock written by `holder`, as another process of this package writes it.
fn lock_of(holder: &Holder) -> Bytes {
    let value = serde_json::json!({ "token": "crashed", "updatedAt": now_iso(), "holder": holder });
    Bytes::from(value.to_string())
}

fn sleeper() -> Child {
    Command::new("sleep").arg("600").spawn().unwrap()
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

fn conflict(outcome: &Result<aml_s3::S3WorkspaceLease, StorageError>) -> bool {
    matches!(outcome, Err(StorageError::Conflict { workspace_id }) if workspace_id == "ws")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_holder_is_taken_over_at_once_and_by_exactly_one_taker() {
    let bucket = Arc::new(Bucket::default());
    let storage = S3WorkspaceStorage::new(bucket.clone(), "bucket", DEFAULT_PREFIX);
    for round in 0..100 {
        let mut child = sleeper();
        let holder = Holder::of_process(child.id()).expect("Linux /proc");
        bucket
            .objects
            .lock()
            .unwrap()
            .insert(LOCK.into(), ("\"held\"".into(), lock_of(&holder)));
        // While the holder lives, its fresh lock excludes everyone.
        assert!(
            conflict(&storage.acquire("ws", true).await),
            "round {round}"
        );
        child.kill().unwrap();
        // Half the rounds take over from a reaped holder, half from an unreaped zombie (the
        // kill has landed, but nobody has waited for it).
        if round % 2 == 0 {
            child.wait().unwrap();
        } else {
            wait_without_reaping(&child);
        }
        let (first, second) =
            tokio::join!(storage.acquire("ws", true), storage.acquire("ws", true));
        let winners = [&first, &second].iter().filter(|o| o.is_ok()).count();
        assert_eq!(winners, 1, "round {round}");
        assert!(conflict(&first) || conflict(&second), "round {round}");
        let lease = first.or(second).unwrap();
        let record: serde_json::Value = {
            let objects = bucket.objects.lock().unwrap();
            serde_json::from_slice(&objects[LOCK].1).unwrap()
        };
        assert_eq!(record["token"], lease.lock_token().unwrap());
        assert_eq!(record["holder"]["pid"], std::process::id());
        lease.release().await.unwrap();
        let _ = child.wait();
    }
}

#[tokio::test]
async fn other_hosts_and_live_or_unknown_holders_keep_the_staleness_rule() {
    let bucket = Arc::new(Bucket::default());
    let storage = S3WorkspaceStorage::new(bucket.clone(), "bucket", DEFAULT_PREFIX);
    let me = Holder::current().unwrap().clone();
    let mut gone = sleeper();
    let dead = Holder::of_process(gone.id()).unwrap();
    gone.kill().unwrap();
    gone.wait().unwrap();
    let elsewhere = Holder {
        hostname: format!("{}-elsewhere", me.hostname),
        ..dead.clone()
    };
    let rebooted = Holder {
        boot_id: "another-boot".into(),
        ..dead.clone()
    };
    let bodies = [
        lock_of(&me),
        lock_of(&elsewhere),
        lock_of(&rebooted),
        // The TypeScript SDK's shape, and a `holder` this package does not understand.
        Bytes::from(serde_json::json!({ "token": "ts", "updatedAt": now_iso() }).to_string()),
        Bytes::from(
            serde_json::json!({ "token": "x", "updatedAt": now_iso(), "holder": "pid 1" })
                .to_string(),
        ),
    ];
    for body in bodies {
        bucket
            .objects
            .lock()
            .unwrap()
            .insert(LOCK.into(), ("\"held\"".into(), body.clone()));
        assert!(
            conflict(&storage.acquire("ws", true).await),
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
}
