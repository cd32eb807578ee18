//! The `lock.json` lease (BW-3): `{token, updatedAt}` created with `If-None-Match: *`,
//! refreshed with `If-Match`, taken over with `If-Match` once `updatedAt` is older than the
//! stale interval, read with a 4 KiB limit, and deleted on release after checking that the
//! token is still ours. Its JSON shape is the TypeScript SDK's, so both exclude each other.
//!
//! A crashed holder (issue 22): the lock also records `holder`, the writer's identity
//! (`aml_workspace::holder::Holder`: host, boot id, pid namespace, pid, start time). An
//! acquirer on the same host takes over at once a lock whose holder is provably gone, with the
//! same `If-Match` replacement as a stale lock, so of two takers exactly one wins. A lock
//! without a usable `holder` (the TypeScript SDK's, another host's) keeps the staleness rule.
//!
//! Another host (issue 34 §6): the lock also records `leaseMs`, the holder's stale interval
//! (20 minutes, or `lockLeaseMs`), and "stale" means older than the lease the lock records
//! ([`crate::lease_time::recorded_lease`]), so a short lease is taken over from any host once
//! it ran out, whatever the acquirer's own setting.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use aml_workspace::holder::Holder;

use crate::client::{ObjectClient, PutCondition, S3Error};
use crate::clock::{iso, Clock};
use crate::error::{workspace, StorageError, LOCK_NO_BODY, LOCK_NO_ETAG, LOCK_TOO_LARGE};
use crate::lease_time::{recorded_lease, LockTimings};

/// The largest lock object read.
pub const MAX_LOCK_BYTES: usize = 4096;

/// Attempts when the lock vanishes between a failed create and its inspection.
const ACQUIRE_ATTEMPTS: usize = 3;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LockBody<'a> {
    token: &'a str,
    updated_at: String,
    /// The holder's stale interval in milliseconds: how long others must wait after
    /// `updatedAt` before taking the lock over.
    lease_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder: Option<&'a Holder>,
}

/// A lock object as read back: what another owner wrote.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockRecord {
    pub token: String,
    pub updated_at: String,
    /// Anything under `holder` that is not a [`Holder`] is ignored (an unknown holder).
    #[serde(default, deserialize_with = "lenient_holder")]
    pub holder: Option<Holder>,
    /// Anything under `leaseMs` that is not a non-negative integer is ignored (no lease
    /// recorded: the reference's 20 minutes).
    #[serde(default, deserialize_with = "lenient_lease")]
    pub lease_ms: Option<u64>,
}

fn lenient_lease<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(value.as_u64())
}

fn lenient_holder<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Holder>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

struct Held {
    etag: String,
    refreshed: DateTime<Utc>,
    lost: bool,
}

/// One held lease.
pub struct Lease {
    client: Arc<dyn ObjectClient>,
    clock: Arc<dyn Clock>,
    timings: LockTimings,
    id: String,
    key: String,
    token: String,
    held: Mutex<Held>,
}

fn body(token: &str, now: DateTime<Utc>, timings: &LockTimings) -> Bytes {
    let text = serde_json::to_string(&LockBody {
        token,
        updated_at: iso(now),
        lease_ms: timings.lease_ms(),
        holder: Holder::current(),
    })
    .expect("lock JSON");
    Bytes::from(text)
}

enum Inspected {
    Missing,
    Present { etag: String, record: LockRecord },
}

async fn inspect(
    client: &dyn ObjectClient,
    id: &str,
    key: &str,
) -> Result<Inspected, StorageError> {
    let fetched = match client.get(key).await {
        Ok(None) => return Ok(Inspected::Missing),
        Ok(Some(fetched)) => fetched,
        Err(error) => {
            return Err(StorageError::caused(
                workspace(id, "could not inspect its lock"),
                &error,
            ))
        }
    };
    let mut stream = fetched
        .body
        .ok_or_else(|| StorageError::error(LOCK_NO_BODY))?;
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| {
            StorageError::caused(workspace(id, "could not inspect its lock"), &error)
        })?;
        if bytes.len() + chunk.len() > MAX_LOCK_BYTES {
            return Err(StorageError::range(LOCK_TOO_LARGE));
        }
        bytes.extend_from_slice(&chunk);
    }
    let etag = fetched
        .etag
        .ok_or_else(|| StorageError::error(LOCK_NO_ETAG))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|_| StorageError::error(workspace(id, "lock is not valid JSON")))?;
    let record =
        parse_record(value).ok_or_else(|| StorageError::error(workspace(id, "lock is invalid")))?;
    Ok(Inspected::Present { etag, record })
}

/// Whether `record` (renewed at `updated`) still excludes others at `now`: its recorded lease
/// has not run out (a clock behind `updatedAt` counts as not run out) and its holder is not a
/// process of this machine that provably no longer exists.
fn is_held(record: &LockRecord, updated: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    let lease = recorded_lease(record.lease_ms);
    let fresh = now
        .signed_duration_since(updated)
        .to_std()
        .map_or(true, |age| age <= lease);
    fresh && !record.holder.as_ref().is_some_and(Holder::is_gone)
}

/// A lock is `{token: non-empty string, updatedAt: ISO date}`; anything else is invalid.
fn parse_record(value: serde_json::Value) -> Option<LockRecord> {
    let record: LockRecord = serde_json::from_value(value).ok()?;
    if record.token.is_empty() || DateTime::parse_from_rfc3339(&record.updated_at).is_err() {
        return None;
    }
    Some(record)
}

impl Lease {
    /// Takes the lease of Workspace `id` at `key`, or fails with `Conflict` when a healthy
    /// owner holds it.
    pub async fn acquire(
        client: Arc<dyn ObjectClient>,
        clock: Arc<dyn Clock>,
        timings: LockTimings,
        id: &str,
        key: String,
    ) -> Result<Lease, StorageError> {
        let token = uuid::Uuid::new_v4().to_string();
        for _ in 0..ACQUIRE_ATTEMPTS {
            let now = clock.now();
            match client
                .put(
                    &key,
                    body(&token, now, &timings),
                    &PutCondition::Absent,
                    Some("application/json"),
                )
                .await
            {
                Ok(etag) => {
                    return Self::held(client, clock, timings, id, key, token, etag, now).await
                }
                Err(S3Error::PreconditionFailed(_)) => {}
                Err(error) => {
                    return Err(StorageError::caused(
                        workspace(id, "lock acquisition failed"),
                        &error,
                    ))
                }
            }
            let (etag, record) = match inspect(client.as_ref(), id, &key).await? {
                Inspected::Missing => continue,
                Inspected::Present { etag, record } => (etag, record),
            };
            let updated = DateTime::parse_from_rfc3339(&record.updated_at)
                .expect("checked")
                .with_timezone(&Utc);
            let now = clock.now();
            if is_held(&record, updated, now) {
                return Err(StorageError::Conflict {
                    workspace_id: id.to_string(),
                });
            }
            let condition = PutCondition::Matches(etag);
            return match client
                .put(
                    &key,
                    body(&token, now, &timings),
                    &condition,
                    Some("application/json"),
                )
                .await
            {
                Ok(etag) => Self::held(client, clock, timings, id, key, token, etag, now).await,
                Err(S3Error::PreconditionFailed(_)) => Err(StorageError::Conflict {
                    workspace_id: id.to_string(),
                }),
                Err(error) => Err(StorageError::caused(
                    workspace(id, "could not replace its stale lock"),
                    &error,
                )),
            };
        }
        Err(StorageError::Conflict {
            workspace_id: id.to_string(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn held(
        client: Arc<dyn ObjectClient>,
        clock: Arc<dyn Clock>,
        timings: LockTimings,
        id: &str,
        key: String,
        token: String,
        etag: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Lease, StorageError> {
        let Some(etag) = etag else {
            // We own an object we cannot refresh or verify: give it back.
            let _ = client.delete(&key).await;
            return Err(StorageError::error(LOCK_NO_ETAG));
        };
        let held = Mutex::new(Held {
            etag,
            refreshed: now,
            lost: false,
        });
        Ok(Lease {
            client,
            clock,
            timings,
            id: id.to_string(),
            key,
            token,
            held,
        })
    }

    /// The lease token written into `lock.json`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether the lease can no longer be trusted: a refresh found another version, or no
    /// refresh succeeded for the stale interval (another process may take it over then).
    pub fn is_lost(&self) -> bool {
        let held = self.held.lock().expect("lease state");
        held.lost
            || self
                .clock
                .now()
                .signed_duration_since(held.refreshed)
                .to_std()
                .is_ok_and(|age| age > self.timings.stale)
    }

    /// `Err(lock was lost)` once [`Lease::is_lost`].
    pub fn check(&self) -> Result<(), StorageError> {
        if self.is_lost() {
            return Err(StorageError::error(workspace(&self.id, "lock was lost")));
        }
        Ok(())
    }

    /// One renewal (`If-Match` on the last version). A failed condition loses the lease; a
    /// transport failure leaves it to the next renewal (and to the stale bound).
    pub async fn refresh(&self) -> Result<(), StorageError> {
        let etag = {
            let held = self.held.lock().expect("lease state");
            if held.lost {
                return Err(StorageError::error(workspace(&self.id, "lock was lost")));
            }
            held.etag.clone()
        };
        let now = self.clock.now();
        let condition = PutCondition::Matches(etag);
        let outcome = self
            .client
            .put(
                &self.key,
                body(&self.token, now, &self.timings),
                &condition,
                Some("application/json"),
            )
            .await;
        let mut held = self.held.lock().expect("lease state");
        match outcome {
            Ok(Some(etag)) => {
                held.etag = etag;
                held.refreshed = now;
                Ok(())
            }
            Ok(None) => {
                held.lost = true;
                Err(StorageError::error(LOCK_NO_ETAG))
            }
            Err(S3Error::PreconditionFailed(_)) => {
                held.lost = true;
                Err(StorageError::error(workspace(&self.id, "lock was lost")))
            }
            Err(error) => Err(StorageError::s3(&error)),
        }
    }

    /// Renews every `refresh` interval until the lease is lost or the task is aborted.
    pub async fn heartbeat(self: Arc<Self>) {
        loop {
            tokio::time::sleep(self.timings.refresh).await;
            if self.refresh().await.is_err() && self.held.lock().expect("lease state").lost {
                return;
            }
        }
    }

    /// Reads the lock back and deletes it when the token is still ours; otherwise the lease
    /// was lost.
    pub async fn release(&self) -> Result<(), StorageError> {
        let lost = || StorageError::error(workspace(&self.id, "lock was lost"));
        match inspect(self.client.as_ref(), &self.id, &self.key).await {
            Ok(Inspected::Present { record, .. }) if record.token == self.token => {}
            Ok(_) => return Err(lost()),
            Err(StorageError::Failed {
                message,
                cause,
                class,
            }) if message.contains("could not inspect") => {
                return Err(StorageError::Failed {
                    message,
                    cause,
                    class,
                });
            }
            Err(_) => return Err(lost()),
        }
        self.held.lock().expect("lease state").lost = true;
        self.client
            .delete(&self.key)
            .await
            .map_err(|error| StorageError::s3(&error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(json: serde_json::Value) -> LockRecord {
        parse_record(json).expect("a valid lock")
    }

    /// A holder this process cannot judge: same host, another pid namespace.
    fn other_namespace() -> serde_json::Value {
        let me = Holder::current().expect("Linux /proc").clone();
        serde_json::to_value(Holder {
            pid_namespace: "pid:[1]".into(),
            pid: u32::MAX,
            ..me
        })
        .unwrap()
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
    }

    #[test]
    fn a_lock_is_held_for_the_lease_it_records() {
        let short = record(serde_json::json!({
            "token": "t", "updatedAt": iso(at(0)), "leaseMs": 3000, "holder": other_namespace(),
        }));
        assert_eq!(short.lease_ms, Some(3000));
        assert!(is_held(&short, at(0), at(3)));
        assert!(!is_held(&short, at(0), at(4)));
        // A clock behind the holder's: not run out.
        assert!(is_held(&short, at(0), at(-60)));
    }

    #[test]
    fn a_lock_without_a_usable_lease_keeps_twenty_minutes() {
        for lease in [
            serde_json::Value::Null,
            serde_json::json!("3000"),
            serde_json::json!(-3000),
            serde_json::json!(3000.5),
            serde_json::json!(999),
            serde_json::json!(1_200_001),
        ] {
            let mut json = serde_json::json!({ "token": "t", "updatedAt": iso(at(0)) });
            if !lease.is_null() {
                json["leaseMs"] = lease.clone();
            }
            let lock = record(json);
            assert!(is_held(&lock, at(0), at(4)), "{lease}");
            assert!(is_held(&lock, at(0), at(20 * 60)), "{lease}");
            assert!(!is_held(&lock, at(0), at(20 * 60 + 1)), "{lease}");
        }
    }

    #[test]
    fn the_lock_written_records_the_holders_lease() {
        let timings = LockTimings::for_lease_ms(3000).unwrap();
        let written: serde_json::Value =
            serde_json::from_slice(&body("t", at(0), &timings)).unwrap();
        assert_eq!(written["leaseMs"], 3000);
        assert_eq!(written["updatedAt"], "2023-11-14T22:13:20.000Z");
        let default: serde_json::Value =
            serde_json::from_slice(&body("t", at(0), &LockTimings::default())).unwrap();
        assert_eq!(default["leaseMs"], 1_200_000);
        assert_eq!(record(default).lease_ms, Some(1_200_000));
    }
}
