//! The S3 Workspace storage: one lease per acquisition with read/write/list/delete/release
//! over `<prefix>/<segment(id)>/…`, guarded by the `lock.json` lease when locking.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{stream, StreamExt, TryStreamExt};
use tokio::sync::Mutex as AsyncMutex;
use tokio::task::JoinHandle;

use crate::client::{ByteStream, ObjectClient, PutCondition, S3Error};
use crate::clock::{Clock, SystemClock};
use crate::error::{invalid_path, workspace, StorageError};
use crate::layout::{is_valid_list_prefix, is_valid_storage_path, WorkspaceKeys};
use crate::lease_time::LockTimings;
use crate::lock::Lease;

/// The storage name of `s3Workspace` providers.
pub const STORAGE_NAME: &str = "s3";

/// Deletes in flight at once for `delete(paths)`.
const DELETE_CONCURRENCY: usize = 8;

/// A write's precondition (WP-2 `WorkspaceStorageWriteCondition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteCondition {
    /// `{kind: "absent"}`: `If-None-Match: *`.
    Absent,
    /// `{kind: "version", version}`: `If-Match: <etag>`.
    Version(String),
}

/// An object read back: its ETag and its bytes, streamed.
pub struct StoredObject {
    pub version: String,
    pub body: ByteStream,
}

/// `s3Workspace`'s storage for one bucket and prefix.
#[derive(Clone)]
pub struct S3WorkspaceStorage {
    client: Arc<dyn ObjectClient>,
    bucket: String,
    prefix: String,
    clock: Arc<dyn Clock>,
    timings: LockTimings,
}

impl S3WorkspaceStorage {
    /// `prefix` must have passed [`crate::layout::check_prefix`].
    pub fn new(
        client: Arc<dyn ObjectClient>,
        bucket: impl Into<String>,
        prefix: impl Into<String>,
    ) -> Self {
        Self {
            client,
            bucket: bucket.into(),
            prefix: prefix.into(),
            clock: Arc::new(SystemClock),
            timings: LockTimings::default(),
        }
    }

    /// The lease timings of this storage's own locks (`lockLeaseMs`: see
    /// [`crate::lease_time`]); the reference's 5/20 minutes otherwise.
    pub fn with_timings(mut self, timings: LockTimings) -> Self {
        self.timings = timings;
        self
    }

    /// Replaces the clock and lease timings (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>, timings: LockTimings) -> Self {
        self.clock = clock;
        self.timings = timings;
        self
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Opens Workspace `id`; with `lock`, takes its lease and starts renewing it (on the
    /// current tokio runtime) until release.
    pub async fn acquire(&self, id: &str, lock: bool) -> Result<S3WorkspaceLease, StorageError> {
        let keys =
            WorkspaceKeys::new(&self.prefix, id).map_err(|message| StorageError::Failed {
                class: crate::ErrorClass::TypeError,
                message: message.into(),
                cause: None,
            })?;
        let lease = if lock {
            let lease = Lease::acquire(
                self.client.clone(),
                self.clock.clone(),
                self.timings,
                id,
                keys.lock_key(),
            )
            .await?;
            Some(Arc::new(lease))
        } else {
            None
        };
        let heartbeat = lease.clone().map(|lease| tokio::spawn(lease.heartbeat()));
        Ok(S3WorkspaceLease {
            client: self.client.clone(),
            id: id.to_string(),
            keys,
            lease,
            heartbeat,
            released: AsyncMutex::new(None),
        })
    }
}

/// One acquisition of one Workspace id.
pub struct S3WorkspaceLease {
    client: Arc<dyn ObjectClient>,
    id: String,
    keys: WorkspaceKeys,
    lease: Option<Arc<Lease>>,
    heartbeat: Option<JoinHandle<()>>,
    released: AsyncMutex<Option<Result<(), StorageError>>>,
}

impl Drop for S3WorkspaceLease {
    fn drop(&mut self) {
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.abort();
        }
    }
}

impl S3WorkspaceLease {
    pub fn workspace_id(&self) -> &str {
        &self.id
    }

    /// Whether [`S3WorkspaceLease::release`] has finished.
    pub fn is_released(&self) -> bool {
        self.released
            .try_lock()
            .is_ok_and(|released| released.is_some())
    }

    /// The lease token, when locked.
    pub fn lock_token(&self) -> Option<&str> {
        self.lease.as_deref().map(Lease::token)
    }

    /// One renewal now (what the heartbeat does every `refresh`, 5 minutes by default).
    pub async fn refresh_lock(&self) -> Result<(), StorageError> {
        match &self.lease {
            Some(lease) => lease.refresh().await,
            None => Ok(()),
        }
    }

    fn usable(&self) -> Result<(), StorageError> {
        if let Ok(guard) = self.released.try_lock() {
            if guard.is_some() {
                return Err(StorageError::error(workspace(
                    &self.id,
                    "storage lease was released",
                )));
            }
        }
        match &self.lease {
            Some(lease) => lease.check(),
            None => Ok(()),
        }
    }

    fn key(&self, path: &str) -> Result<String, StorageError> {
        if !is_valid_storage_path(path) {
            return Err(invalid_path(path));
        }
        Ok(self.keys.key(path))
    }

    /// The object at `path`, or `None`.
    pub async fn read(&self, path: &str) -> Result<Option<StoredObject>, StorageError> {
        let key = self.key(path)?;
        self.usable()?;
        let Some(fetched) = self
            .client
            .get(&key)
            .await
            .map_err(|error| StorageError::s3(&error))?
        else {
            return Ok(None);
        };
        let object = |what: &str| {
            StorageError::error(workspace(&self.id, &format!("object \"{path}\" {what}")))
        };
        let body = fetched
            .body
            .ok_or_else(|| object("did not return a streaming body"))?;
        let version = fetched
            .etag
            .ok_or_else(|| object("did not return an ETag"))?;
        Ok(Some(StoredObject { version, body }))
    }

    /// Writes `path`; returns the new ETag.
    pub async fn write(
        &self,
        path: &str,
        body: Bytes,
        condition: Option<&WriteCondition>,
        content_type: Option<&str>,
    ) -> Result<String, StorageError> {
        let key = self.key(path)?;
        self.usable()?;
        let condition = match condition {
            None => PutCondition::None,
            Some(WriteCondition::Absent) => PutCondition::Absent,
            Some(WriteCondition::Version(etag)) => PutCondition::Matches(etag.clone()),
        };
        match self.client.put(&key, body, &condition, content_type).await {
            Ok(Some(etag)) => Ok(etag),
            Ok(None) => Err(StorageError::error(workspace(
                &self.id,
                &format!("object \"{path}\" did not return an ETag"),
            ))),
            Err(S3Error::PreconditionFailed(message)) => Err(StorageError::ConditionFailed {
                path: path.to_string(),
                message,
            }),
            Err(error) => Err(StorageError::s3(&error)),
        }
    }

    /// The storage paths under `prefix` (a plain string prefix; `""` lists everything).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        if !is_valid_list_prefix(prefix) {
            return Err(invalid_path(prefix));
        }
        self.usable()?;
        let keys = self
            .client
            .list(&self.keys.key(prefix))
            .await
            .map_err(|error| StorageError::s3(&error))?;
        Ok(keys
            .iter()
            .filter_map(|key| self.keys.path_of(key))
            .map(str::to_string)
            .collect())
    }

    /// Deletes `paths` (missing ones included).
    pub async fn delete(&self, paths: &[String]) -> Result<(), StorageError> {
        let keys = paths
            .iter()
            .map(|path| self.key(path))
            .collect::<Result<Vec<_>, _>>()?;
        self.usable()?;
        let client = &self.client;
        stream::iter(keys)
            .map(|key| async move { client.delete(&key).await })
            .buffer_unordered(DELETE_CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await
            .map_err(|error| StorageError::s3(&error))?;
        Ok(())
    }

    /// Stops renewing and gives the lease back. Idempotent: later calls return the first
    /// call's outcome.
    pub async fn release(&self) -> Result<(), StorageError> {
        let mut released = self.released.lock().await;
        if let Some(outcome) = released.as_ref() {
            return outcome.clone();
        }
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.abort();
        }
        let outcome = match &self.lease {
            Some(lease) => lease.release().await,
            None => Ok(()),
        };
        *released = Some(outcome.clone());
        outcome
    }
}
