//! The `lock.json` lease against moto: contention, renewal, stale takeover, loss, and every
//! lock message moto can provoke.

use std::sync::Arc;
use std::time::Duration;

use aml_s3::{
    ErrorClass, LockTimings, ObjectClient, PutCondition, S3WorkspaceStorage, StorageError,
    DEFAULT_PREFIX,
};
use bytes::Bytes;
use futures_util::TryStreamExt;
use serde_json::Value;

use crate::{Case, Env, ShiftedClock};

pub const CASES: &[(&str, Case)] = &[
    ("lock_contention_is_a_conflict", |env| {
        Box::pin(contention(env))
    }),
    ("lock_renewal_advances_updated_at", |env| {
        Box::pin(renewal(env))
    }),
    ("lock_heartbeat_renews_on_its_interval", |env| {
        Box::pin(heartbeat(env))
    }),
    ("lock_stale_takeover_and_the_old_owner_loses", |env| {
        Box::pin(takeover(env))
    }),
    ("lock_not_yet_stale_is_a_conflict", |env| {
        Box::pin(not_stale(env))
    }),
    ("lock_deleted_by_someone_else_is_lost", |env| {
        Box::pin(deleted(env))
    }),
    ("lock_unrenewed_past_stale_is_lost", |env| {
        Box::pin(unrenewed(env))
    }),
    ("lock_contents_are_checked", |env| Box::pin(contents(env))),
    ("lock_acquisition_failure_names_the_workspace", |env| {
        Box::pin(acquisition_failed(env))
    }),
    ("lock_16_contenders_one_holder", |env| {
        Box::pin(contenders(env))
    }),
];

const LOCK: &str = "aml/workspaces/ws/lock.json";

async fn lock_json(env: &Env) -> Option<Value> {
    let fetched = env.client().get(LOCK).await.unwrap()?;
    let bytes: Vec<Bytes> = fetched.body.unwrap().try_collect().await.unwrap();
    Some(serde_json::from_slice(&bytes.concat()).unwrap())
}

fn storage(env: &Env, clock: Arc<ShiftedClock>, timings: LockTimings) -> S3WorkspaceStorage {
    S3WorkspaceStorage::new(env.client(), env.bucket.clone(), DEFAULT_PREFIX)
        .with_clock(clock, timings)
}

fn message(error: StorageError) -> String {
    error.message()
}

async fn contention(env: Env) {
    let s = storage(&env, Arc::default(), LockTimings::default());
    let first = s.acquire("ws", true).await.unwrap();
    let lock = lock_json(&env).await.unwrap();
    assert_eq!(lock["token"], first.lock_token().unwrap());
    assert!(lock["updatedAt"].as_str().unwrap().ends_with('Z'));
    let second = s.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        second,
        StorageError::Conflict {
            workspace_id: "ws".into()
        }
    );
    assert_eq!(
        second.message(),
        "Workspace \"ws\" already has an active writer"
    );
    // Unlocked acquisitions overlap and touch no lock.
    let unlocked = s.acquire("ws", false).await.unwrap();
    unlocked.release().await.unwrap();
    first.release().await.unwrap();
    first.release().await.unwrap();
    assert!(lock_json(&env).await.is_none());
    s.acquire("ws", true)
        .await
        .unwrap()
        .release()
        .await
        .unwrap();
}

async fn renewal(env: Env) {
    let clock = Arc::new(ShiftedClock::default());
    let s = storage(&env, clock.clone(), LockTimings::default());
    let lease = s.acquire("ws", true).await.unwrap();
    let before = lock_json(&env).await.unwrap();
    clock.shift(chrono::Duration::minutes(5));
    lease.refresh_lock().await.unwrap();
    let after = lock_json(&env).await.unwrap();
    assert_eq!(before["token"], after["token"]);
    assert!(after["updatedAt"].as_str().unwrap() > before["updatedAt"].as_str().unwrap());
    // Renewed 19 minutes ago from the contender's point of view: still healthy.
    clock.shift(chrono::Duration::minutes(19));
    let contender = storage(&env, clock.clone(), LockTimings::default());
    assert!(matches!(
        contender.acquire("ws", true).await,
        Err(StorageError::Conflict { .. })
    ));
    lease.release().await.unwrap();
}

async fn heartbeat(env: Env) {
    let timings = LockTimings {
        refresh: Duration::from_millis(50),
        stale: Duration::from_secs(1200),
    };
    let clock = Arc::new(ShiftedClock::default());
    let s = storage(&env, clock.clone(), timings);
    let lease = s.acquire("ws", true).await.unwrap();
    let first = lock_json(&env).await.unwrap()["updatedAt"].clone();
    clock.shift(chrono::Duration::seconds(1));
    // Hang guard only: the heartbeat must write a later updatedAt on its own.
    let mut renewed = false;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if lock_json(&env).await.unwrap()["updatedAt"] != first {
            renewed = true;
            break;
        }
    }
    assert!(renewed, "the heartbeat never renewed the lock");
    lease.release().await.unwrap();
    assert!(lock_json(&env).await.is_none());
}

async fn takeover(env: Env) {
    let old_clock = Arc::new(ShiftedClock::default());
    let old = storage(&env, old_clock, LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    let new_clock = Arc::new(ShiftedClock::default());
    new_clock.shift(chrono::Duration::minutes(21));
    let new = storage(&env, new_clock, LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    assert_eq!(
        lock_json(&env).await.unwrap()["token"],
        new.lock_token().unwrap()
    );
    // The old owner's renewal finds another version: the lease is lost from then on.
    assert_eq!(
        message(old.refresh_lock().await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
    assert_eq!(
        message(old.read("workspace.json").await.err().unwrap()),
        "S3 Workspace \"ws\" lock was lost"
    );
    let write = old
        .write("workspace.json", Bytes::from("{}"), None, None)
        .await
        .unwrap_err();
    assert_eq!(message(write), "S3 Workspace \"ws\" lock was lost");
    assert_eq!(
        message(old.release().await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
    // The old owner's release did not delete the new owner's lock.
    assert_eq!(
        lock_json(&env).await.unwrap()["token"],
        new.lock_token().unwrap()
    );
    new.release().await.unwrap();
}

async fn not_stale(env: Env) {
    let _held = storage(&env, Arc::default(), LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    let clock = Arc::new(ShiftedClock::default());
    clock.shift(chrono::Duration::minutes(19));
    let error = storage(&env, clock, LockTimings::default())
        .acquire("ws", true)
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        StorageError::Conflict {
            workspace_id: "ws".into()
        }
    );
}

async fn deleted(env: Env) {
    let lease = storage(&env, Arc::default(), LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    env.client().delete(LOCK).await.unwrap();
    assert_eq!(
        message(lease.release().await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
    let lease = storage(&env, Arc::default(), LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    env.client().delete(LOCK).await.unwrap();
    // If-Match on a missing lock fails its condition: lost.
    assert_eq!(
        message(lease.refresh_lock().await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
}

async fn unrenewed(env: Env) {
    let clock = Arc::new(ShiftedClock::default());
    let lease = storage(&env, clock.clone(), LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    lease.read("workspace.json").await.unwrap();
    clock.shift(chrono::Duration::minutes(21));
    assert_eq!(
        message(lease.list("").await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
    assert_eq!(
        message(lease.delete(&["x".into()]).await.unwrap_err()),
        "S3 Workspace \"ws\" lock was lost"
    );
    // Nobody took it over, so the token is still ours and release deletes it.
    lease.release().await.unwrap();
    assert!(lock_json(&env).await.is_none());
}

async fn put_lock(env: &Env, body: impl Into<Bytes>) {
    env.client()
        .put(LOCK, body.into(), &PutCondition::None, None)
        .await
        .unwrap();
}

async fn contents(env: Env) {
    let s = storage(&env, Arc::default(), LockTimings::default());
    put_lock(&env, "not json").await;
    assert_eq!(
        message(s.acquire("ws", true).await.err().unwrap()),
        "S3 Workspace \"ws\" lock is not valid JSON"
    );
    for invalid in [
        r#"{"token":1,"updatedAt":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"token":"t","updatedAt":"yesterday"}"#,
        r#"{"token":"","updatedAt":"2026-01-01T00:00:00.000Z"}"#,
        "[]",
        "null",
    ] {
        put_lock(&env, invalid).await;
        assert_eq!(
            message(s.acquire("ws", true).await.err().unwrap()),
            "S3 Workspace \"ws\" lock is invalid",
            "{invalid}"
        );
    }
    put_lock(
        &env,
        format!(
            r#"{{"token":"{}","updatedAt":"2026-01-01T00:00:00.000Z"}}"#,
            "x".repeat(4096)
        ),
    )
    .await;
    let error = s.acquire("ws", true).await.err().unwrap();
    assert_eq!(
        error,
        StorageError::Failed {
            class: ErrorClass::RangeError,
            message: "S3 Workspace lock exceeded 4096 bytes".into(),
            cause: None
        }
    );
    // A well-formed lock written long ago (by us or by the TypeScript SDK) is taken over.
    put_lock(
        &env,
        r#"{"token":"ts-sdk-owner","updatedAt":"2020-01-01T00:00:00.000Z"}"#,
    )
    .await;
    let lease = s.acquire("ws", true).await.unwrap();
    assert_ne!(lock_json(&env).await.unwrap()["token"], "ts-sdk-owner");
    lease.release().await.unwrap();
}

async fn acquisition_failed(env: Env) {
    let client = Arc::new(
        aml_s3::NativeS3Client::new(&aml_s3::S3Config {
            bucket: "no-such-bucket".into(),
            ..env.config()
        })
        .unwrap(),
    );
    let s = S3WorkspaceStorage::new(client, "no-such-bucket", DEFAULT_PREFIX);
    match s.acquire("ws", true).await.err().unwrap() {
        StorageError::Failed {
            class: ErrorClass::Error,
            message,
            cause: Some(cause),
        } => {
            assert_eq!(message, "S3 Workspace \"ws\" lock acquisition failed");
            assert!(cause.to_string().contains("PutObject"), "{cause}");
        }
        other => panic!("{other:?}"),
    }
}

async fn contenders(env: Env) {
    let s = storage(&env, Arc::default(), LockTimings::default());
    let attempts = (0..16).map(|_| {
        let s = s.clone();
        tokio::spawn(async move { s.acquire("ws", true).await })
    });
    let mut holders = Vec::new();
    for outcome in futures_util::future::join_all(attempts).await {
        match outcome.unwrap() {
            Ok(lease) => holders.push(lease),
            Err(StorageError::Conflict { .. }) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(holders.len(), 1);
    holders.pop().unwrap().release().await.unwrap();
}
