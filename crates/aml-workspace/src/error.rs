//! Errors as data. The facade rebuilds each one as the documented JS class (`Error`,
//! `TypeError`, `RangeError`, `AggregateError`, `WorkspaceConflictError`) or, for a failure a
//! JS storage adapter threw, as that very object (`Host`), so user errors keep their identity.

use std::fmt;
use std::io;
use std::path::Path;

use serde::Serialize;

/// Which JS class the facade builds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ErrorClass {
    Error,
    TypeError,
    RangeError,
    AggregateError,
    /// `WorkspaceConflictError(workspaceId)`: another writer holds the identity.
    Conflict {
        #[serde(rename = "workspaceId")]
        workspace_id: String,
    },
    /// A value a JS adapter threw, kept by the facade under this reference.
    Host {
        reference: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceError {
    #[serde(flatten)]
    pub class: ErrorClass,
    pub message: String,
    /// Node's error code for I/O failures (`ENOENT` …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Box<WorkspaceError>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<WorkspaceError>,
}

pub type Result<T> = std::result::Result<T, WorkspaceError>;

impl WorkspaceError {
    fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        WorkspaceError {
            class,
            message: message.into(),
            code: None,
            cause: None,
            errors: Vec::new(),
        }
    }
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Error, message)
    }
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::TypeError, message)
    }
    pub fn range(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::RangeError, message)
    }
    pub fn conflict(workspace_id: &str) -> Self {
        let message = format!("Workspace \"{workspace_id}\" already has an active writer");
        Self::new(
            ErrorClass::Conflict {
                workspace_id: workspace_id.into(),
            },
            message,
        )
    }
    pub fn host(reference: u32) -> Self {
        Self::new(ErrorClass::Host { reference }, "")
    }
    pub fn aggregate(message: impl Into<String>, errors: Vec<WorkspaceError>) -> Self {
        let mut error = Self::new(ErrorClass::AggregateError, message);
        error.errors = errors;
        error
    }
    pub fn with_cause(mut self, cause: WorkspaceError) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }
    pub fn is_conflict(&self) -> bool {
        matches!(self.class, ErrorClass::Conflict { .. })
    }

    /// An I/O failure in Node's words: `ENOENT: no such file or directory, open '<path>'`.
    pub fn io(error: &io::Error, syscall: &str, path: &Path) -> Self {
        let code = error.raw_os_error().map(errno_name).unwrap_or("EIO");
        let description = match error.raw_os_error() {
            Some(errno) => io::Error::from_raw_os_error(errno)
                .to_string()
                .split(" (os error")
                .next()
                .unwrap_or_default()
                .to_lowercase(),
            None => error.to_string(),
        };
        let mut result = Self::error(format!(
            "{code}: {description}, {syscall} '{}'",
            path.display()
        ));
        result.code = Some(code.into());
        result
    }

    /// JSON for the facade.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"kind\":\"error\"}".into())
    }
}

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(cause) = &self.cause {
            write!(f, " (cause: {cause})")?;
        }
        for error in &self.errors {
            write!(f, " [{error}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for WorkspaceError {}

/// The POSIX name of the errnos a workspace operation can meet.
fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EROFS => "EROFS",
        libc::ELOOP => "ELOOP",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EXDEV => "EXDEV",
        libc::EBUSY => "EBUSY",
        libc::EMFILE => "EMFILE",
        libc::EINVAL => "EINVAL",
        _ => "EIO",
    }
}

/// What counts as an absent object: a missing path, or a path through a file (as absent as
/// a missing one). Reads, listings and bulk restores alike.
pub(crate) fn is_absent(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_carries_class_and_members() {
        assert_eq!(
            WorkspaceError::conflict("a").to_json(),
            r#"{"kind":"conflict","workspaceId":"a","message":"Workspace \"a\" already has an active writer"}"#
        );
        let nested = WorkspaceError::aggregate("both", vec![WorkspaceError::range("r")])
            .with_cause(WorkspaceError::host(3));
        assert_eq!(
            nested.to_json(),
            r#"{"kind":"aggregateError","message":"both","cause":{"kind":"host","reference":3,"message":""},"errors":[{"kind":"rangeError","message":"r"}]}"#
        );
    }
}
