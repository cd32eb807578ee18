//! The S3 Workspace store (`crates/aml-s3`) for `s3Workspace({ config })` (the native client)
//! and `s3Workspace({ client })` (an application's S3Client behind the port of
//! [`super::s3_port`]): storages, leases and object bodies in small-integer tables, each
//! operation a Promise of an [`S3Outcome`]. A failure is `error`: JSON `{class, message,
//! cause?, hostCause?, reference?, workspaceId?}` that `lib/workspace/s3/native-storage.js`
//! turns into the documented JS error (or the application's own, by reference).
//! Conversions only.

use std::sync::Arc;

use aml_s3::{
    ByteStream, ErrorClass, LockTimings, NativeS3Client, S3Config, S3Credentials, S3Error,
    S3WorkspaceLease, S3WorkspaceStorage, StorageError, WriteCondition,
};
use futures_util::StreamExt;
use napi::bindgen_prelude::{Buffer, Object};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::{json, Value};

use super::s3_port::{JsS3Client, PortFunction};
use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;

#[napi(object)]
#[derive(Default)]
pub struct S3Outcome {
    pub ok: bool,
    pub error: Option<String>,
    /// A lease or body handle.
    pub handle: Option<u32>,
    pub version: Option<String>,
    pub paths: Option<Vec<String>>,
    /// One body chunk; absent at the end of the body.
    pub chunk: Option<Buffer>,
}

type Body = tokio::sync::Mutex<ByteStream>;
static STORAGES: Handles<S3WorkspaceStorage> = Handles::new();
static LEASES: Handles<S3WorkspaceLease> = Handles::new();
static BODIES: Handles<Body> = Handles::new();

fn get<T>(table: &Handles<T>, id: u32) -> std::result::Result<Arc<T>, StorageError> {
    table.get(id).ok_or_else(|| StorageError::Failed {
        class: ErrorClass::Error,
        message: "AML S3 Workspace handle is closed".into(),
        cause: None,
    })
}

fn error_json(error: &StorageError) -> String {
    let value = match error {
        StorageError::Conflict { workspace_id } => {
            json!({ "class": "Conflict", "message": error.message(), "workspaceId": workspace_id })
        }
        StorageError::ConditionFailed { message, .. } => {
            json!({ "class": "Error", "message": message, "name": "PreconditionFailed" })
        }
        StorageError::Failed {
            class,
            message,
            cause,
        } => {
            let mut value = json!({ "class": format!("{class:?}"), "message": message });
            match cause {
                Some(S3Error::Host { reference, .. }) => value["hostCause"] = json!(reference),
                Some(cause) => value["cause"] = json!(cause.to_string()),
                None => {}
            }
            value
        }
        StorageError::Host { reference, message } => {
            json!({ "class": "Host", "message": message, "reference": reference })
        }
    };
    value.to_string()
}

fn done(result: std::result::Result<S3Outcome, StorageError>) -> S3Outcome {
    match result {
        Ok(outcome) => S3Outcome {
            ok: true,
            ..outcome
        },
        Err(error) => S3Outcome {
            error: Some(error_json(&error)),
            ..S3Outcome::default()
        },
    }
}

fn config(json: &str) -> Option<(S3Config, String)> {
    let value: Value = serde_json::from_str(json).ok()?;
    let text = |key: &str| value[key].as_str().map(str::to_owned);
    let credentials = value
        .get("credentials")
        .filter(|c| c.is_object())
        .map(|c| S3Credentials {
            access_key_id: c["accessKeyId"].as_str().unwrap_or_default().into(),
            secret_access_key: c["secretAccessKey"].as_str().unwrap_or_default().into(),
            session_token: c["sessionToken"].as_str().map(str::to_owned),
        });
    let config = S3Config {
        bucket: text("bucket")?,
        region: text("region"),
        endpoint: text("endpoint"),
        credentials,
        force_path_style: value["forcePathStyle"].as_bool().unwrap_or(false),
    };
    Some((config, text("prefix")?))
}

/// The lease timings of `lockLeaseMs` (validated by the facade; absent: the reference's).
fn lease_timings(value: &Value) -> Option<LockTimings> {
    match &value["lockLeaseMs"] {
        Value::Null => Some(LockTimings::default()),
        lease => LockTimings::for_lease_ms(lease.as_u64()?),
    }
}

/// The `s3Workspace({ lockLeaseMs })` check: its exact RangeError message, or `null` for a
/// lease the lock accepts (`aml_s3::lease_time`, where the bounds are decided).
#[napi]
pub fn s3_lock_lease_problem(value: f64) -> Result<Option<String>> {
    guard(|| Ok(aml_s3::lease_time::lease_ms_problem(value)))
}

/// A storage for `{bucket, prefix, lockLeaseMs?, region?, endpoint?, credentials?,
/// forcePathStyle?}` (JSON, validated by the facade). No request is made.
#[napi]
pub fn s3_storage_create(config_json: String) -> Result<u32> {
    guard(|| {
        let invalid = || Error::new(Status::InvalidArg, "invalid S3 storage config");
        let (config, prefix) = config(&config_json).ok_or_else(invalid)?;
        let value: Value = serde_json::from_str(&config_json).map_err(|_| invalid())?;
        let timings = lease_timings(&value).ok_or_else(invalid)?;
        let client = NativeS3Client::new(&config)
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        Ok(STORAGES.insert(
            S3WorkspaceStorage::new(Arc::new(client), config.bucket, prefix).with_timings(timings),
        ))
    })
}

/// A storage for `{bucket, prefix, lockLeaseMs?}` (JSON, validated by the facade) over an
/// application's S3Client behind `port` (see [`super::s3_port`]).
#[napi(
    ts_args_type = "configJson: string, port: (op: number, key: string, body: Buffer | null, extra: string) => Promise<S3PortOutcome>"
)]
pub fn s3_storage_create_for_client(config_json: String, port: PortFunction<'_>) -> Result<u32> {
    guard(|| {
        let invalid = || Error::new(Status::InvalidArg, "invalid S3 storage config");
        let value: Value = serde_json::from_str(&config_json).map_err(|_| invalid())?;
        let text = |key: &str| value[key].as_str().map(str::to_owned).ok_or_else(invalid);
        let (bucket, prefix) = (text("bucket")?, text("prefix")?);
        let timings = lease_timings(&value).ok_or_else(invalid)?;
        let storage = S3WorkspaceStorage::new(Arc::new(JsS3Client::new(port)?), bucket, prefix)
            .with_timings(timings);
        Ok(STORAGES.insert(storage))
    })
}

#[napi]
pub fn s3_storage_close(storage: u32) -> Result<()> {
    guard(|| {
        STORAGES.remove(storage);
        Ok(())
    })
}

fn run<F>(env: &Env, work: F) -> Result<Object<'_>>
where
    F: std::future::Future<Output = std::result::Result<S3Outcome, StorageError>> + Send + 'static,
{
    spawn_promise(env, async move { Ok(done(work.await)) }, |_, outcome| {
        Ok(outcome)
    })
}

/// Opens Workspace `id`; `handle` is the lease.
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_storage_acquire(env: &Env, storage: u32, id: String, lock: bool) -> Result<Object<'_>> {
    run(env, async move {
        let lease = get(&STORAGES, storage)?.acquire(&id, lock).await?;
        Ok(S3Outcome {
            handle: Some(LEASES.insert(lease)),
            ..S3Outcome::default()
        })
    })
}

/// `handle` is a body (read it with `s3BodyNext`), absent when the object does not exist.
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_read(env: &Env, lease: u32, path: String) -> Result<Object<'_>> {
    run(env, async move {
        let Some(object) = get(&LEASES, lease)?.read(&path).await? else {
            return Ok(S3Outcome::default());
        };
        let body = BODIES.insert(tokio::sync::Mutex::new(object.body));
        Ok(S3Outcome {
            handle: Some(body),
            version: Some(object.version),
            ..S3Outcome::default()
        })
    })
}

/// The next chunk of `body`; the end (or a failure) closes it.
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_body_next(env: &Env, body: u32) -> Result<Object<'_>> {
    run(env, async move {
        let stream = get(&BODIES, body)?;
        let next = stream.lock().await.next().await;
        match next {
            Some(Ok(chunk)) => Ok(S3Outcome {
                chunk: Some(chunk.to_vec().into()),
                ..S3Outcome::default()
            }),
            end => {
                let _ = s3_body_close(body);
                match end {
                    Some(Err(error)) => Err(StorageError::s3(&error)),
                    _ => Ok(S3Outcome::default()),
                }
            }
        }
    })
}

#[napi]
pub fn s3_body_close(body: u32) -> Result<()> {
    guard(|| {
        BODIES.remove(body);
        Ok(())
    })
}

/// Writes `body`; `condition` is `{kind: "absent"} | {kind: "version", version}` JSON.
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_write(
    env: &Env,
    lease: u32,
    path: String,
    body: Buffer,
    condition: Option<String>,
    content_type: Option<String>,
) -> Result<Object<'_>> {
    let (bytes, condition) = guard(|| {
        let condition = condition
            .and_then(|json| serde_json::from_str::<Value>(&json).ok())
            .and_then(|value| match value["kind"].as_str() {
                Some("absent") => Some(WriteCondition::Absent),
                Some("version") => value["version"]
                    .as_str()
                    .map(|v| WriteCondition::Version(v.into())),
                _ => None,
            });
        Ok((bytes::Bytes::from(body.to_vec()), condition))
    })?;
    run(env, async move {
        let lease = get(&LEASES, lease)?;
        let version = lease
            .write(&path, bytes, condition.as_ref(), content_type.as_deref())
            .await?;
        Ok(S3Outcome {
            version: Some(version),
            ..S3Outcome::default()
        })
    })
}

#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_list(env: &Env, lease: u32, prefix: String) -> Result<Object<'_>> {
    run(env, async move {
        let paths = get(&LEASES, lease)?.list(&prefix).await?;
        Ok(S3Outcome {
            paths: Some(paths),
            ..S3Outcome::default()
        })
    })
}

#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_delete(env: &Env, lease: u32, paths: Vec<String>) -> Result<Object<'_>> {
    run(env, async move {
        get(&LEASES, lease)?.delete(&paths).await?;
        Ok(S3Outcome::default())
    })
}

/// Releases the lease (idempotent in the store). The handle stays, so later calls report the
/// released lease, until the facade's lease object is collected ([`s3_lease_close`]).
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_release(env: &Env, lease: u32) -> Result<Object<'_>> {
    run(env, async move {
        get(&LEASES, lease)?.release().await?;
        Ok(S3Outcome::default())
    })
}

/// Forgets a lease handle (the facade's lease object was collected).
#[napi]
pub fn s3_lease_close(lease: u32) -> Result<()> {
    guard(|| {
        LEASES.remove(lease);
        Ok(())
    })
}

/// One renewal now (tests; the store renews every 5 minutes by itself).
#[napi(ts_return_type = "Promise<S3Outcome>")]
pub fn s3_lease_refresh(env: &Env, lease: u32) -> Result<Object<'_>> {
    run(env, async move {
        get(&LEASES, lease)?.refresh_lock().await?;
        Ok(S3Outcome::default())
    })
}

/// Unreleased leases and open bodies (tests prove a released lease and a finished body leave
/// nothing behind).
#[napi]
pub fn s3_live_handles() -> Result<u32> {
    guard(|| {
        Ok({
            let unreleased = LEASES.count_where(|lease| !lease.is_released());
            let bodies = BODIES.len();
            (unreleased + bodies) as u32
        })
    })
}
