//! What a studio serves, and the state its routes read (below both the listener and the
//! routes, so neither depends on the other).

use std::path::PathBuf;

use crate::rerun::RerunCommand;

/// What `aml studio` serves.
#[derive(Debug, Clone)]
pub struct StudioConfig {
    /// The runs directory.
    pub runs: PathBuf,
    /// 0 picks a free port.
    pub port: u16,
    /// The access token every request must carry.
    pub token: String,
    /// How to start `aml run` for "re-run from here"; `None` disables re-runs.
    pub rerun: Option<RerunCommand>,
}

pub(crate) struct State {
    pub(crate) config: StudioConfig,
    pub(crate) port: u16,
    pub(crate) reruns: crate::rerun::Reruns,
}
