//! The table of external ACP ports (a Sandbox process's stdio, or a relay process) by
//! handle. Session handles and relay keys share it, so it sits below both session.rs and
//! external.rs / relay.rs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aml_acp::ExternalPort;
use napi::{Error, Result};

/// Set in the port key of a relay process; session handles stay below it.
pub(crate) const RELAY_PORT_BIT: u32 = 1 << 31;

static PORTS: Mutex<Option<HashMap<u32, Arc<ExternalPort>>>> = Mutex::new(None);

fn ports<R>(f: impl FnOnce(&mut HashMap<u32, Arc<ExternalPort>>) -> R) -> R {
    let mut ports = PORTS.lock().unwrap_or_else(|p| p.into_inner());
    f(ports.get_or_insert_with(HashMap::new))
}

pub(crate) fn port(handle: u32) -> Result<Arc<ExternalPort>> {
    ports(|p| p.get(&handle).cloned())
        .ok_or_else(|| Error::from_reason("ACP session handle is closed"))
}

pub(crate) fn register(key: u32, port: Arc<ExternalPort>) {
    ports(|p| p.insert(key, port));
}

pub(crate) fn forget(handle: u32) {
    ports(|p| p.remove(&handle));
}
