//! The four S3 operations the Workspace store needs, as a trait: the native client implements
//! it over `object_store`, and unit tests use an in-memory double to provoke the replies a
//! conforming server never gives (a missing ETag or body).

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;

/// A failed S3 request. `PreconditionFailed` is the one outcome callers branch on: an
/// `If-None-Match: *` or `If-Match` condition did not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum S3Error {
    #[error("{0}")]
    PreconditionFailed(String),
    #[error("{0}")]
    Failed(String),
    /// A value an application-supplied client threw, kept by the facade under `reference`
    /// so the application sees its own error; `message` is its text.
    #[error("{message}")]
    Host { reference: u32, message: String },
}

/// The condition of a PUT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutCondition {
    /// Unconditional overwrite.
    None,
    /// `If-None-Match: *`: create only.
    Absent,
    /// `If-Match: <etag>`: replace exactly this version.
    Matches(String),
}

/// A byte stream read from S3.
pub type ByteStream = BoxStream<'static, Result<Bytes, S3Error>>;

/// A successful GET. Both members are optional because S3-compatible services differ; the
/// store turns a missing one into its documented error.
pub struct Fetched {
    pub etag: Option<String>,
    pub body: Option<ByteStream>,
}

/// What the store asks of an S3 client. Keys are complete object keys.
#[async_trait]
pub trait ObjectClient: Send + Sync + 'static {
    /// `GetObject`; a missing key is `Ok(None)`.
    async fn get(&self, key: &str) -> Result<Option<Fetched>, S3Error>;
    /// `PutObject` under `condition`; the ETag of the new version, if the server sent one.
    async fn put(
        &self,
        key: &str,
        body: Bytes,
        condition: &PutCondition,
        content_type: Option<&str>,
    ) -> Result<Option<String>, S3Error>;
    /// `DeleteObject` (deleting a missing key succeeds, as in S3).
    async fn delete(&self, key: &str) -> Result<(), S3Error>;
    /// Every key that starts with `prefix` (plain string prefix, all pages), in key order.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, S3Error>;
}
