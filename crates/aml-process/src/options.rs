//! What a caller can ask of one spawn. `launch.rs` turns it into the strings `execve` needs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Default time between SIGTERM and SIGKILL when a tree is torn down.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Options for [`spawn`](crate::spawn) and [`exec`](crate::exec).
///
/// Environment merge, mirroring `{...process.env, ...env, PWD: cwd}` of the contract (PA-8):
/// 1. start from the host environment, or from nothing when `inherit_env` is `false`;
/// 2. apply `env` in order; a later entry for the same key wins over an earlier one and over the
///    inherited value;
/// 3. when `cwd` is set, `PWD` is set to it (made absolute against the host's current directory),
///    overriding both of the above, so shells in the child agree with the real directory.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// Working directory of the child; the host's when `None`.
    pub cwd: Option<PathBuf>,
    /// Extra environment, merged as described on the type.
    pub env: Vec<(String, String)>,
    /// Whether the child starts from the host environment (default `true`).
    pub inherit_env: bool,
    /// Kill the tree when the leader is still running this long after spawn.
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL on teardown; zero sends SIGKILL at once.
    pub grace: Duration,
    /// Shared byte budget over stdout AND stderr; exceeding it kills the tree.
    pub output_limit: Option<usize>,
    /// Cancelling this token kills the tree (see the crate docs for why a token and not a future).
    pub cancel: Option<CancellationToken>,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        SpawnOptions {
            cwd: None,
            env: Vec::new(),
            inherit_env: true,
            timeout: None,
            grace: DEFAULT_GRACE,
            output_limit: None,
            cancel: None,
        }
    }
}

/// `cwd` joined onto the host's current directory when relative; unchanged when that fails (the
/// spawn then reports the real problem).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
