//! The persistence engine over an S3 lease: the port the binding implements in JavaScript
//! (`lib/workspace/s3`), written out here so `aml-workspace` runs over `aml-s3` in Rust tests.
#![allow(dead_code)]

use aml_s3::{S3WorkspaceLease, StorageError, WriteCondition};
use aml_workspace::{
    ReadBody, Result, StorageLease, StorageObject, Version, WorkspaceError, WriteBody, WriteOptions,
};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::TryStreamExt;

pub struct EngineLease(pub S3WorkspaceLease);

fn failed(error: StorageError) -> WorkspaceError {
    WorkspaceError::error(error.to_string())
}

#[async_trait]
impl StorageLease for EngineLease {
    async fn read(&self, path: &str, _max_bytes: u64) -> Result<Option<StorageObject>> {
        let Some(object) = self.0.read(path).await.map_err(failed)? else {
            return Ok(None);
        };
        let chunks: Vec<Bytes> = object
            .body
            .try_collect()
            .await
            .map_err(|error| WorkspaceError::error(error.to_string()))?;
        Ok(Some(StorageObject {
            body: ReadBody::Bytes(chunks.concat()),
            version: Version(object.version),
        }))
    }

    async fn write(&self, path: &str, body: WriteBody, options: WriteOptions) -> Result<Version> {
        let bytes = match body {
            WriteBody::Bytes(bytes) => bytes,
            WriteBody::File(at) => {
                std::fs::read(&at).map_err(|e| WorkspaceError::io(&e, "open", &at))?
            }
        };
        let condition = match options.condition {
            aml_workspace::WriteCondition::None => None,
            aml_workspace::WriteCondition::Absent => Some(WriteCondition::Absent),
            aml_workspace::WriteCondition::Version(Version(etag)) => {
                Some(WriteCondition::Version(etag))
            }
        };
        let etag = self
            .0
            .write(
                path,
                bytes.into(),
                condition.as_ref(),
                options.content_type.as_deref(),
            )
            .await
            .map_err(failed)?;
        Ok(Version(etag))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        self.0.list(prefix).await.map_err(failed)
    }

    async fn delete(&self, paths: &[String]) -> Result<()> {
        self.0.delete(paths).await.map_err(failed)
    }

    async fn release(&self) -> Result<()> {
        self.0.release().await.map_err(failed)
    }
}
