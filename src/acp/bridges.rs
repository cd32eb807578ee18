//! The live MCP Tool bridges of this process by handle (`src/acp/loop_bridge.rs` starts them
//! on the JS thread's event loop). The Sandbox MCP relay looks its bridge up here, and the
//! leak checks of the tests count them.

use std::collections::HashMap;
use std::sync::Mutex;

use aml_acp::LoopBridge;
use napi::{Error, Result};
use napi_derive::napi;

use crate::boundary::guard::guard;

#[derive(Default)]
pub(crate) struct Bridges {
    pub(crate) live: HashMap<u32, LoopBridge>,
    next: u32,
}

impl Bridges {
    /// Files `bridge` under a fresh nonzero handle.
    pub(crate) fn insert(&mut self, bridge: LoopBridge) -> u32 {
        loop {
            self.next = self.next.wrapping_add(1);
            if self.next != 0 && !self.live.contains_key(&self.next) {
                break;
            }
        }
        self.live.insert(self.next, bridge);
        self.next
    }
}

static BRIDGES: Mutex<Option<Bridges>> = Mutex::new(None);

pub(crate) fn bridges<R>(f: impl FnOnce(&mut Bridges) -> R) -> R {
    let mut bridges = BRIDGES.lock().unwrap_or_else(|p| p.into_inner());
    f(bridges.get_or_insert_with(Bridges::default))
}

/// Stops serving bridge `handle` and cancels its relay's running Tool calls (the facade closes
/// its sockets). Idempotent.
#[napi]
pub fn acp_bridge_stop(handle: u32) -> Result<()> {
    guard(|| {
        if let Some(bridge) = bridges(|b| b.live.remove(&handle)) {
            bridge.stop();
        }
        Ok(())
    })
}

/// Bridges not yet stopped (leak checks in tests).
#[napi]
pub fn live_acp_bridges() -> Result<u32> {
    guard(|| Ok(bridges(|b| b.live.len() as u32)))
}

/// The request handler of bridge `handle`, for a Sandbox MCP relay.
pub(crate) fn relay_target(handle: u32) -> Result<aml_acp::RelayTarget> {
    bridges(|b| b.live.get(&handle).map(LoopBridge::relay_target))
        .ok_or_else(|| Error::from_reason("ACP MCP bridge handle is stopped"))
}
