//! A short lease (issue 34 §6, `lockLeaseMs`): the holder records its lease in `lock.json`,
//! renews every third of it, and any acquirer — whatever its own setting — takes the lock
//! over once that recorded lease ran out, not earlier; locks recording no lease keep the
//! reference's 20 minutes. Over an in-memory bucket with S3's conditional semantics; the
//! cross-host case end to end is `__test__/s3-lease-takeover.spec.ts`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use aml_s3::{LockTimings, OffsetClock, S3WorkspaceStorage, StorageError, DEFAULT_PREFIX};
use bytes::Bytes;
use support::bucket::Bucket;

const LOCK: &str = "aml/workspaces/ws/lock.json";

fn storage(
    bucket: &Arc<Bucket>,
    clock: &Arc<OffsetClock>,
    timings: LockTimings,
) -> S3WorkspaceStorage {
    S3WorkspaceStorage::new(bucket.clone(), "bucket", DEFAULT_PREFIX)
        .with_clock(clock.clone(), timings)
}

fn lock_json(bucket: &Bucket) -> serde_json::Value {
    serde_json::from_slice(&bucket.objects.lock().unwrap()[LOCK].1).unwrap()
}

fn conflict(outcome: &Result<aml_s3::S3WorkspaceLease, StorageError>) -> bool {
    matches!(outcome, Err(StorageError::Conflict { workspace_id }) if workspace_id == "ws")
}

fn lease(ms: u64) -> LockTimings {
    LockTimings::for_lease_ms(ms).unwrap()
}

#[tokio::test]
async fn a_short_lease_is_taken_over_once_it_ran_out_and_not_before() {
    let bucket = Arc::new(Bucket::default());
    let holder_clock = Arc::new(OffsetClock::default());
    let holder = storage(&bucket, &holder_clock, lease(3_000))
        .acquire("ws", true)
        .await
        .unwrap();
    assert_eq!(lock_json(&bucket)["leaseMs"], 3_000);
    // The acquirer keeps the reference's timings: the lease the lock records decides.
    let clock = Arc::new(OffsetClock::default());
    let acquirer = storage(&bucket, &clock, LockTimings::default());
    clock.set_offset_ms(2_000);
    assert!(conflict(&acquirer.acquire("ws", true).await));
    clock.set_offset_ms(3_500);
    let taken = acquirer.acquire("ws", true).await.unwrap();
    assert_eq!(lock_json(&bucket)["token"], taken.lock_token().unwrap());
    assert_eq!(lock_json(&bucket)["leaseMs"], 1_200_000);
    // The old holder's next renewal finds another version.
    assert!(holder.refresh_lock().await.is_err());
    assert!(holder.release().await.is_err());
    taken.release().await.unwrap();
}

#[tokio::test]
async fn a_renewed_short_lease_keeps_excluding() {
    let bucket = Arc::new(Bucket::default());
    let holder_clock = Arc::new(OffsetClock::default());
    let holder = storage(&bucket, &holder_clock, lease(3_000))
        .acquire("ws", true)
        .await
        .unwrap();
    let clock = Arc::new(OffsetClock::default());
    let acquirer = storage(&bucket, &clock, lease(3_000));
    for step in 1..=5 {
        // Renewed at step × 2 s; the acquirer looks 2 s later each time: 10 s in all.
        holder_clock.set_offset_ms(step * 2_000);
        holder.refresh_lock().await.unwrap();
        clock.set_offset_ms(step * 2_000 + 2_000);
        assert!(conflict(&acquirer.acquire("ws", true).await), "step {step}");
    }
    holder.release().await.unwrap();
}

#[tokio::test]
async fn an_acquirers_short_lease_does_not_shorten_a_default_holders() {
    let bucket = Arc::new(Bucket::default());
    let holder = storage(&bucket, &Arc::default(), LockTimings::default())
        .acquire("ws", true)
        .await
        .unwrap();
    let clock = Arc::new(OffsetClock::default());
    let acquirer = storage(&bucket, &clock, lease(1_000));
    clock.set_offset_ms(19 * 60 * 1000);
    assert!(conflict(&acquirer.acquire("ws", true).await));
    clock.set_offset_ms(21 * 60 * 1000);
    acquirer.acquire("ws", true).await.unwrap();
    assert!(holder.refresh_lock().await.is_err());
}

#[tokio::test]
async fn a_lock_recording_no_lease_keeps_twenty_minutes() {
    let bucket = Arc::new(Bucket::default());
    let updated = chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    // The TypeScript SDK's shape.
    let body = serde_json::json!({ "token": "ts", "updatedAt": updated }).to_string();
    bucket
        .objects
        .lock()
        .unwrap()
        .insert(LOCK.into(), ("\"held\"".into(), Bytes::from(body)));
    let clock = Arc::new(OffsetClock::default());
    let acquirer = storage(&bucket, &clock, lease(1_000));
    clock.set_offset_ms(60_000);
    assert!(conflict(&acquirer.acquire("ws", true).await));
    clock.set_offset_ms(21 * 60 * 1000);
    acquirer.acquire("ws", true).await.unwrap();
}

#[tokio::test]
async fn the_holder_renews_within_its_short_lease() {
    let bucket = Arc::new(Bucket::default());
    let holder = storage(&bucket, &Arc::default(), lease(1_000))
        .acquire("ws", true)
        .await
        .unwrap();
    let first = lock_json(&bucket)["updatedAt"].clone();
    // Hang guard only (60 s): the heartbeat must write a later updatedAt on its own.
    let mut renewed = false;
    for _ in 0..1200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if lock_json(&bucket)["updatedAt"] != first {
            renewed = true;
            break;
        }
    }
    assert!(renewed, "the heartbeat never renewed the lock");
    holder.release().await.unwrap();
}
