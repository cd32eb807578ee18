//! The MCP Tool bridge as a sans-IO state machine, for a host that owns the sockets itself
//! (the addon serves it on the JS thread's own event loop: `lib/agents/acp/loop-bridge.js`).
//!
//! Why: the JS Tools run on the JS thread. Served from a thread of its own, a Tool call is
//! four cross-thread wake-ups (agent → bridge thread → JS thread → bridge thread → agent),
//! and on a small VM each costs tens of µs of CPU; served where the Tools run, the only
//! wake-ups left are the agent's own. The HTTP/1.1 framing is hyper's, polled by hand
//! (`bridge_conn.rs`); authentication, the 404/405 rules, JSON-RPC and MCP routing
//! (`bridge::route_sync`) and the answer texts (`bridge::call_answer`) are the very code the
//! Sandbox MCP relay's requests go through. The host only moves bytes and runs the Tool calls
//! it is handed.
//!
//! Per connection, requests are answered in order: while a Tool call is out, later
//! requests (a pipelining client) wait in the buffer.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use aml_ports::{ToolCallError, ToolInvoker, ToolRef, ToolSpec};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::bridge::{self, RelayTarget, Served};
use crate::bridge_conn::{Connection, Step};

/// What the host must do next on one connection, in this order: write `write`, start
/// `call` (its outcome comes back through [`LoopBridge::answer`]), close after the write.
#[derive(Debug, Default, PartialEq)]
pub struct Feed {
    pub write: Vec<u8>,
    /// The Tool and its input (JSON text) to run.
    pub call: Option<(ToolRef, String)>,
    pub close: bool,
}

/// One bridge whose connections a host serves (see the module comment).
pub struct LoopBridge {
    /// `aml_<32 hex>`, the MCP server name the agent sees.
    pub name: String,
    token: String,
    stop: CancellationToken,
    served: Arc<Served>,
    connections: HashMap<u32, Connection>,
}

impl LoopBridge {
    /// A bridge for `tools`. `invoker` serves the Sandbox MCP relay's calls, which arrive
    /// on tokio ([`LoopBridge::relay_target`]); the host runs the connections' calls itself.
    pub fn new(tools: Vec<ToolSpec>, invoker: Arc<dyn ToolInvoker>) -> io::Result<LoopBridge> {
        let identity = bridge::identity(tools, invoker)?;
        Ok(LoopBridge {
            name: identity.name,
            token: identity.token,
            stop: identity.stop,
            served: identity.served,
            connections: HashMap::new(),
        })
    }

    /// The ACP `McpServer` descriptor once the host listens on `127.0.0.1:port`.
    pub fn descriptor(&self, port: u16) -> Value {
        let url = format!("http://127.0.0.1:{port}/mcp");
        bridge::descriptor(&self.name, &url, &self.token)
    }

    /// Bytes read from connection `conn` (a new id opens it).
    pub fn feed(&mut self, conn: u32, bytes: &[u8]) -> Feed {
        let served = &self.served;
        let connection = self
            .connections
            .entry(conn)
            .or_insert_with(|| Connection::new(Arc::clone(served)));
        connection.feed(bytes).into()
    }

    /// The outcome of the Tool call out on `conn`: its answer, then whatever the buffered
    /// requests behind it ask for. Nothing when the connection is gone.
    pub fn answer(&mut self, conn: u32, outcome: Result<Value, ToolCallError>) -> Feed {
        match self.connections.get_mut(&conn) {
            Some(connection) => connection.answer(outcome).into(),
            None => Feed::default(),
        }
    }

    /// Connection `conn` closed: its buffered bytes and any answer owed are dropped.
    pub fn drop_connection(&mut self, conn: u32) {
        self.connections.remove(&conn);
    }

    /// Connections open (tests check that closed ones are dropped).
    pub fn connections(&self) -> usize {
        self.connections.len()
    }

    /// Cancels the relay's running calls; the host closes its sockets.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// What a Sandbox MCP relay forwards its requests to (the same routing and
    /// authentication as a loopback connection gets).
    pub fn relay_target(&self) -> RelayTarget {
        RelayTarget(Arc::clone(&self.served))
    }
}

impl Drop for LoopBridge {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl From<Step> for Feed {
    fn from(step: Step) -> Feed {
        Feed {
            write: step.write,
            call: step.call,
            close: step.close,
        }
    }
}

#[cfg(test)]
#[path = "bridge_loop_tests.rs"]
mod tests;
