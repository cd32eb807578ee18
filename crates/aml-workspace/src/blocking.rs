//! Blocking filesystem work off the async runtime, for every module of the crate (the
//! persistence lifecycle, the folder format, the filesystem store): at the bottom of the
//! module graph so none of them depends on another for it.

use crate::error::{Result, WorkspaceError};

/// Runs `work` on tokio's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| WorkspaceError::error(format!("AML workspace task failed: {error}")))?
}
