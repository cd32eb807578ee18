//! The MCP Tool bridge as a sans-IO state machine, for a host that owns the sockets itself
//! (the addon serves it on the JS thread's own event loop: `lib/agents/acp/loop-bridge.js`).
//!
//! Why: the JS Tools run on the JS thread. Served from a thread of its own, a Tool call is
//! four cross-thread wake-ups (agent → bridge thread → JS thread → bridge thread → agent),
//! and on a small VM each costs tens of µs of CPU; served where the Tools run, the only
//! wake-ups left are the agent's own. The protocol stays here: request framing and limits
//! (`http::parse_request`), authentication, the 404/405 rules, JSON-RPC and MCP routing
//! (`bridge::route_sync`) and the answer texts (`bridge::call_answer`) are the very code the
//! Sandbox MCP relay's requests go through. The host only moves bytes and runs the Tool calls it is handed.
//!
//! Per connection, requests are answered in order: while a Tool call is out, later
//! requests (a pipelining client) wait in the buffer.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use aml_ports::{ToolCallError, ToolInvoker, ToolRef, ToolSpec};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::bridge::{self, call_answer, route_sync, RelayTarget, Routed, Served, BODY_LIMIT};
use crate::http::{self, ReadError};

/// What the host must do next on one connection, in this order: write `write`, start
/// `call` (its outcome comes back through [`LoopBridge::answer`]), close after the write.
#[derive(Debug, Default, PartialEq)]
pub struct Feed {
    pub write: Vec<u8>,
    /// The Tool and its input (JSON text) to run.
    pub call: Option<(ToolRef, String)>,
    pub close: bool,
}

#[derive(Default)]
struct Connection {
    buffer: Vec<u8>,
    /// The JSON-RPC id of the Tool call out on this connection, and whether the request
    /// asked to close afterwards.
    pending: Option<(Value, bool)>,
    closed: bool,
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
        let connection = self.connections.entry(conn).or_default();
        if connection.closed {
            return Feed::default();
        }
        connection.buffer.extend_from_slice(bytes);
        let mut feed = Feed::default();
        advance(&self.served, connection, &mut feed);
        feed
    }

    /// The outcome of the Tool call out on `conn`: its answer, then whatever the buffered
    /// requests behind it ask for. Nothing when the connection is gone.
    pub fn answer(&mut self, conn: u32, outcome: Result<Value, ToolCallError>) -> Feed {
        let mut feed = Feed::default();
        let Some(connection) = self.connections.get_mut(&conn) else {
            return feed;
        };
        let Some((id, close)) = connection.pending.take() else {
            return feed;
        };
        feed.write = http::response(200, &call_answer(id, outcome), "");
        if close {
            connection.closed = true;
            feed.close = true;
        } else {
            advance(&self.served, connection, &mut feed);
        }
        feed
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

/// Answers the buffered requests of `connection` up to the next Tool call.
fn advance(served: &Served, connection: &mut Connection, feed: &mut Feed) {
    while connection.pending.is_none() && !connection.closed {
        let request = match http::parse_request(&mut connection.buffer, BODY_LIMIT) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(error) => {
                let ReadError::Bad(status) = error;
                feed.write
                    .extend(http::response(status, b"", "Connection: close\r\n"));
                connection.buffer.clear();
                connection.closed = true;
                feed.close = true;
                return;
            }
        };
        match route_sync(served, &request) {
            Routed::Answer(status, body, extra) => {
                feed.write.extend(http::response(status, &body, extra));
                if request.close {
                    connection.closed = true;
                    feed.close = true;
                }
            }
            Routed::Call { id, tool, input } => {
                connection.pending = Some((id, request.close));
                feed.call = Some((tool, input.to_string()));
            }
        }
    }
}

#[cfg(test)]
#[path = "bridge_loop_tests.rs"]
mod tests;
