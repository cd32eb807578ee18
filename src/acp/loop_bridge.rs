//! Binding for the MCP bridge served on the JS thread's event loop
//! (`aml_acp::LoopBridge`, `lib/agents/acp/loop-bridge.js`): the facade owns the `node:net` sockets
//! and runs the Tool calls it is handed through the same `dispatch` as the Sandbox relay's calls;
//! framing, limits, authentication, routing and the answer texts stay in Rust. See the
//! crate module for why a Tool call is cheaper here than on a thread of its own.

use aml_acp::{BridgeFeed, LoopBridge};
use aml_ports::ToolSpec;
use napi::bindgen_prelude::Buffer;
use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::acp::bridges::bridges;
use crate::boundary::guard::guard;
use crate::tools::dispatch::{self as tool_dispatch, decode, ToolOutcome};

/// An opened loop bridge: its handle and MCP server name.
#[napi(object)]
pub struct LoopBridgeInfo {
    pub handle: u32,
    pub name: String,
}

/// What the facade does next on one connection, in this order: write `write`, run Tool
/// `tool` with `input` (JSON text) and answer with its outcome, end the socket (`close`).
#[napi(object)]
pub struct LoopBridgeFeed {
    pub write: Option<Buffer>,
    pub tool: Option<u32>,
    pub input: Option<String>,
    pub close: bool,
}

impl From<BridgeFeed> for LoopBridgeFeed {
    fn from(feed: BridgeFeed) -> Self {
        let (tool, input) = match feed.call {
            Some((tool, input)) => (Some(tool.0), Some(input)),
            None => (None, None),
        };
        LoopBridgeFeed {
            write: (!feed.write.is_empty()).then(|| feed.write.into()),
            tool,
            input,
            close: feed.close,
        }
    }
}

/// A stopped bridge's sockets only need closing.
fn closed() -> LoopBridgeFeed {
    LoopBridgeFeed {
        write: None,
        tool: None,
        input: None,
        close: true,
    }
}

fn with_loop(handle: u32, f: impl FnOnce(&mut LoopBridge) -> LoopBridgeFeed) -> LoopBridgeFeed {
    bridges(|b| match b.live.get_mut(&handle) {
        Some(bridge) => f(bridge),
        _ => closed(),
    })
}

/// Opens a bridge for `tools` (`[{ ref, name, description, inputSchema }]` JSON); the
/// facade listens and asks for the descriptor with its port.
#[napi]
pub fn acp_loop_bridge_open(tools: String) -> Result<LoopBridgeInfo> {
    guard(|| {
        let tools: Vec<ToolSpec> = serde_json::from_str(&tools)
            .map_err(|error| Error::new(Status::InvalidArg, error.to_string()))?;
        // The Sandbox MCP relay's calls arrive on tokio and take the threadsafe dispatcher.
        let invoker = tool_dispatch::current()?;
        let bridge = LoopBridge::new(tools, invoker).map_err(|error| {
            Error::from_reason(format!("ACP MCP bridge could not start: {error}"))
        })?;
        let name = bridge.name.clone();
        let handle = bridges(|b| b.insert(bridge));
        Ok(LoopBridgeInfo { handle, name })
    })
}

/// The ACP descriptor of loop bridge `handle` listening on `127.0.0.1:port` (JSON).
#[napi]
pub fn acp_loop_bridge_descriptor(handle: u32, port: u32) -> Result<String> {
    guard(|| {
        let port = u16::try_from(port)
            .map_err(|_| Error::new(Status::InvalidArg, "port out of range".to_owned()))?;
        bridges(|b| match b.live.get(&handle) {
            Some(bridge) => Ok(bridge.descriptor(port).to_string()),
            _ => Err(Error::from_reason("ACP MCP bridge handle is stopped")),
        })
    })
}

/// Bytes read from connection `conn` of bridge `handle`.
#[napi]
pub fn acp_loop_bridge_feed(handle: u32, conn: u32, chunk: Buffer) -> Result<LoopBridgeFeed> {
    guard(|| Ok(with_loop(handle, |bridge| bridge.feed(conn, &chunk).into())))
}

/// The outcome of the Tool call out on `conn` (what `dispatch` resolved with).
#[napi]
pub fn acp_loop_bridge_answer(
    handle: u32,
    conn: u32,
    outcome: ToolOutcome,
) -> Result<LoopBridgeFeed> {
    guard(|| {
        let outcome = decode(Ok(outcome));
        Ok(with_loop(handle, |bridge| {
            bridge.answer(conn, outcome).into()
        }))
    })
}

/// Connection `conn` of bridge `handle` closed.
#[napi]
pub fn acp_loop_bridge_drop(handle: u32, conn: u32) -> Result<()> {
    guard(|| {
        bridges(|b| {
            if let Some(bridge) = b.live.get_mut(&handle) {
                bridge.drop_connection(conn);
            }
        });
        Ok(())
    })
}
