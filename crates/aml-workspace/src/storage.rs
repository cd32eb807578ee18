//! The storage port: what a revision store must do for [`crate::persistence`]. Built-in stores
//! (the filesystem store here, the S3 store in `aml-s3`) implement it natively; the binding
//! implements it for storage adapters written in JavaScript (the WP-2 contract).
//!
//! Paths are normalized relative `/` paths inside one acquired Workspace identity
//! (`workspace.json`, `revisions/<id>.tar.gz`, `revisions/<id>/files/…`). Versions are opaque
//! tokens; the engine only hands them back in a `Version` condition.

use std::path::{Path, PathBuf};
use std::pin::Pin;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::cancel::Cancel;
use crate::error::{Result, WorkspaceError};

/// An opaque object version (a SHA-256 hex digest for the filesystem store, an ETag for S3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(pub String);

/// When a write may happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteCondition {
    /// Unconditional replacement.
    None,
    /// Create only: fail when the object exists (`If-None-Match: *`).
    Absent,
    /// Replace only this version (`If-Match`).
    Version(Version),
}

/// The body of a write: bytes in memory, or a staged local file (archives), which a store
/// may stream from; `content_length` in [`WriteOptions`] is its size.
#[derive(Debug)]
pub enum WriteBody {
    Bytes(Vec<u8>),
    File(PathBuf),
}

#[derive(Clone, Debug)]
pub struct WriteOptions {
    pub condition: WriteCondition,
    pub content_type: Option<String>,
    pub content_length: Option<u64>,
}

impl WriteOptions {
    pub fn new(condition: WriteCondition) -> Self {
        WriteOptions {
            condition,
            content_type: None,
            content_length: None,
        }
    }
}

/// The body of a read.
pub enum ReadBody {
    Bytes(Vec<u8>),
    Stream(Pin<Box<dyn AsyncRead + Send>>),
}

impl std::fmt::Debug for ReadBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadBody::Bytes(bytes) => write!(f, "Bytes({})", bytes.len()),
            ReadBody::Stream(_) => f.write_str("Stream"),
        }
    }
}

#[derive(Debug)]
pub struct StorageObject {
    pub body: ReadBody,
    pub version: Version,
}

/// Whether a body grew beyond its limit.
pub enum Limited {
    Within(Vec<u8>),
    Exceeded,
}

impl ReadBody {
    /// Collects at most `limit` bytes; one byte more is [`Limited::Exceeded`], so a hostile
    /// body is never buffered past its bound.
    pub async fn collect(self, limit: u64) -> Result<Limited> {
        match self {
            ReadBody::Bytes(bytes) if bytes.len() as u64 > limit => Ok(Limited::Exceeded),
            ReadBody::Bytes(bytes) => Ok(Limited::Within(bytes)),
            ReadBody::Stream(stream) => {
                let mut bytes = Vec::new();
                stream
                    .take(limit + 1)
                    .read_to_end(&mut bytes)
                    .await
                    .map_err(|error| WorkspaceError::error(error.to_string()))?;
                if bytes.len() as u64 > limit {
                    Ok(Limited::Exceeded)
                } else {
                    Ok(Limited::Within(bytes))
                }
            }
        }
    }
}

/// A local file to store create-only at `path` (a folder revision's file).
#[derive(Clone, Debug)]
pub struct LocalFile {
    pub path: String,
    pub source: PathBuf,
    pub size: u64,
}

/// An object to copy into the new file `entry` (a validated entry path) beneath a restore's
/// destination, which must hold exactly `size` bytes; the file gets `mode`.
#[derive(Clone, Debug)]
pub struct ObjectFile {
    pub path: String,
    pub entry: String,
    pub size: u64,
    pub mode: u32,
}

/// What the engine passes to [`StorageAdapter::acquire`].
#[derive(Clone, Debug)]
pub struct AcquireRequest {
    pub evaluation_id: String,
    pub id: String,
    pub lock: bool,
}

/// A store of Workspace identities (WP-2 `WorkspaceStorageAdapter`).
#[async_trait]
pub trait StorageAdapter: Send + Sync {
    /// The provider name (`"filesystem"`, `"s3"`).
    fn name(&self) -> &str;
    /// Scoped access to one identity; with `lock`, exclusive (a held lock is
    /// [`WorkspaceError::conflict`] for `request.id`).
    async fn acquire(&self, request: AcquireRequest) -> Result<Box<dyn StorageLease>>;
}

/// Access to one Workspace identity (WP-2 `WorkspaceStorageLease`). Every method may be called
/// concurrently (folder revisions read and write many objects at once).
#[async_trait]
pub trait StorageLease: Send + Sync {
    /// The object at `path`, or `None` when it does not exist. `max_bytes` is the engine's
    /// bound for this object: a store may stop reading past it (the engine enforces it anyway).
    async fn read(&self, path: &str, max_bytes: u64) -> Result<Option<StorageObject>>;
    /// Writes `body` under `options.condition`; a failed condition is an error.
    async fn write(&self, path: &str, body: WriteBody, options: WriteOptions) -> Result<Version>;
    /// Every object whose path starts with `prefix`, in any order.
    async fn list(&self, prefix: &str) -> Result<Vec<String>>;
    /// Deletes the objects; a missing one is not an error.
    async fn delete(&self, paths: &[String]) -> Result<()>;
    /// Ends the lease (releases the lock). Called once.
    async fn release(&self) -> Result<()>;

    /// Stores many local files create-only in one call (a folder revision), checking `cancel`
    /// before each. `None` (the default): the store has no faster way than one
    /// [`StorageLease::write`] per file, which the engine then makes. The filesystem store
    /// copies them in bulk on blocking threads.
    async fn write_local_files(
        &self,
        _files: &[LocalFile],
        _cancel: &Cancel,
    ) -> Option<Result<()>> {
        None
    }

    /// Removes at most `budget` scratch files that no live writer can still be using (a
    /// killed writer's temporary files) and returns how many it removed; they are invisible
    /// to [`StorageLease::list`], so only the store can find them. Run by the sweep after a
    /// save published (see [`crate::sweep`]). The default: the store has none.
    async fn sweep_scratch(&self, _budget: usize) -> Result<usize> {
        Ok(0)
    }

    /// Removes the empty directories beneath `prefix` (and it), which a killed writer of an
    /// abandoned revision may leave where a store has directories (the filesystem store's
    /// `revisions/<id>/…`). Called by the sweep only for revisions nobody can be writing.
    async fn remove_empty_directories(&self, _prefix: &str) -> Result<()> {
        Ok(())
    }

    /// Copies many objects into new files beneath `dest` in one call (a folder restore),
    /// checking `cancel` before each; `None` (the default) as for
    /// [`StorageLease::write_local_files`].
    async fn read_into_files(
        &self,
        _files: &[ObjectFile],
        _dest: &Path,
        _cancel: &Cancel,
    ) -> Option<Result<()>> {
        None
    }
}
