//! The store's failures, each with the class and exact text of BW-3.

use crate::client::S3Error;

/// The JavaScript class a failure surfaces as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    Error,
    RangeError,
    TypeError,
}

/// A failed Workspace storage operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// Another owner holds the lease: `WorkspaceConflictError(workspaceId)`.
    #[error("Workspace \"{workspace_id}\" already has an active writer")]
    Conflict { workspace_id: String },
    /// A conditional write whose condition did not hold (the persistence engine turns this
    /// into its stale-publication error); `cause` is the S3 reply.
    #[error("{message}")]
    ConditionFailed { path: String, message: String },
    /// Everything else: the documented text, and the provider failure behind it.
    #[error("{message}")]
    Failed {
        class: ErrorClass,
        message: String,
        cause: Option<S3Error>,
    },
    /// A failure an application-supplied client threw, surfaced as that very value.
    #[error("{message}")]
    Host { reference: u32, message: String },
}

impl StorageError {
    pub(crate) fn error(message: impl Into<String>) -> Self {
        Self::Failed {
            class: ErrorClass::Error,
            message: message.into(),
            cause: None,
        }
    }

    pub(crate) fn caused(message: impl Into<String>, cause: &S3Error) -> Self {
        Self::Failed {
            class: ErrorClass::Error,
            message: message.into(),
            cause: Some(cause.clone()),
        }
    }

    pub(crate) fn range(message: impl Into<String>) -> Self {
        Self::Failed {
            class: ErrorClass::RangeError,
            message: message.into(),
            cause: None,
        }
    }

    /// The S3 failure itself (an operational error keeps its provider text; an
    /// application client's failure stays the value it threw).
    pub fn s3(error: &S3Error) -> Self {
        match error {
            S3Error::Host { reference, message } => Self::Host {
                reference: *reference,
                message: message.clone(),
            },
            other => Self::error(other.to_string()),
        }
    }

    /// The message the user sees.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

pub(crate) fn workspace(id: &str, what: &str) -> String {
    format!("S3 Workspace \"{id}\" {what}")
}

pub(crate) fn invalid_path(path: &str) -> StorageError {
    StorageError::error(format!("S3 Workspace storage path \"{path}\" is invalid"))
}

pub(crate) const LOCK_NO_ETAG: &str = "S3 Workspace lock operation did not return an ETag";
pub(crate) const LOCK_NO_BODY: &str = "S3 Workspace lock did not contain a streaming body";
pub(crate) const LOCK_TOO_LARGE: &str = "S3 Workspace lock exceeded 4096 bytes";
