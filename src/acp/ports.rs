//! The table of external ACP ports (a Sandbox process's stdio, or a relay process) by
//! handle. Session handles and relay keys share it, so it sits below both session.rs and
//! external.rs / relay.rs.

use std::sync::Arc;

use aml_acp::ExternalPort;
use napi::{Error, Result};

use crate::boundary::handles::Handles;

/// Set in the port key of a relay process; session handles stay below it.
pub(crate) const RELAY_PORT_BIT: u32 = 1 << 31;

// Filed under keys chosen by their owners (a session's handle, or a relay key with the
// high bit), not allocated here.
static PORTS: Handles<ExternalPort> = Handles::new();

pub(crate) fn port(handle: u32) -> Result<Arc<ExternalPort>> {
    PORTS
        .get(handle)
        .ok_or_else(|| Error::from_reason("ACP session handle is closed"))
}

pub(crate) fn register(key: u32, port: Arc<ExternalPort>) {
    PORTS.insert_at(key, port);
}

pub(crate) fn forget(handle: u32) {
    PORTS.remove(handle);
}
