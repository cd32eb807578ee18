//! Binding for the ACP MCP bridge (`aml_acp::start_bridge`): serves the Tools a provider run
//! lent (`lib/tools/native-dispatch.js`) through this environment's weak Tool dispatcher.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aml_acp::{Bridge, LoopBridge};
use aml_ports::{ToolInvoker, ToolSpec};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::acp::bridge_runtime;
use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::tools::dispatch as tool_dispatch;

/// A bridge served from the bridge thread (tokio), or on the JS thread's event loop
/// (`src/acp/loop_bridge.rs`).
pub(crate) enum Live {
    Threaded(Bridge),
    Loop(LoopBridge),
}

impl Live {
    fn stop(&self) {
        match self {
            Live::Threaded(bridge) => bridge.stop(),
            Live::Loop(bridge) => bridge.stop(),
        }
    }

    fn relay_target(&self) -> aml_acp::RelayTarget {
        match self {
            Live::Threaded(bridge) => bridge.relay_target(),
            Live::Loop(bridge) => bridge.relay_target(),
        }
    }
}

#[derive(Default)]
pub(crate) struct Bridges {
    pub(crate) live: HashMap<u32, Live>,
    next: u32,
}

impl Bridges {
    /// Files `bridge` under a fresh nonzero handle.
    pub(crate) fn insert(&mut self, bridge: Live) -> u32 {
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

/// A started bridge: its handle, MCP server name and the ACP descriptor (JSON).
#[napi(object)]
pub struct BridgeInfo {
    pub handle: u32,
    pub name: String,
    pub descriptor: String,
}

/// Starts a bridge for `tools` (`[{ ref, name, description, inputSchema }]` JSON).
#[napi(ts_return_type = "Promise<BridgeInfo>")]
pub fn acp_bridge_start(env: &Env, tools: String) -> Result<Object<'_>> {
    let (invoker, tools) = guard(|| {
        let tools: Vec<ToolSpec> = serde_json::from_str(&tools)
            .map_err(|error| Error::new(Status::InvalidArg, error.to_string()))?;
        let invoker: Arc<dyn ToolInvoker> = tool_dispatch::current()?;
        Ok((invoker, tools))
    })?;
    let start = async move {
        // Served on the bridge thread (see `bridge_runtime.rs` for why not here).
        let started = bridge_runtime::spawn(aml_acp::start_bridge(tools, invoker))
            .await
            .map_err(|error| {
                Error::from_reason(format!("ACP MCP bridge could not start: {error}"))
            })?;
        let bridge = started.map_err(|error| {
            Error::from_reason(format!("ACP MCP bridge could not start: {error}"))
        })?;
        let name = bridge.name.clone();
        let descriptor = bridge.descriptor().to_string();
        let handle = bridges(|b| b.insert(Live::Threaded(bridge)));
        Ok(BridgeInfo {
            handle,
            name,
            descriptor,
        })
    };
    spawn_promise(env, start, |_, info| Ok(info))
}

/// Stops serving and cancels the bridge's running Tool calls. Idempotent.
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
pub fn live_acp_bridges() -> u32 {
    bridges(|b| b.live.len() as u32)
}

/// The request handler of bridge `handle`, for a Sandbox MCP relay.
pub(crate) fn relay_target(handle: u32) -> Result<aml_acp::RelayTarget> {
    bridges(|b| b.live.get(&handle).map(Live::relay_target))
        .ok_or_else(|| Error::from_reason("ACP MCP bridge handle is stopped"))
}
