//! The MCP Tool bridge's protocol (INVENTORY BA-0 "MCP bridge"): a Streamable-HTTP MCP server on
//! `127.0.0.1:<random>/mcp` that serves an Agent's JS Tools to its ACP agent. The host owns the
//! sockets (`bridge_loop.rs`: the addon serves them on the JS thread's event loop); this module
//! is the routing both the loopback connections and the Sandbox MCP relay go through. Stateless JSON
//! responses; `Authorization: Bearer <token>` required. A wrong path or token is 404 (the
//! server does not reveal itself), any other method on `/mcp` is 405. Tool calls go through
//! the [`ToolInvoker`] (the weak JS dispatcher in the addon), failures become `isError`
//! results the model can read.

use std::io;
use std::sync::Arc;

use aml_ports::{ToolCallError, ToolInvoker, ToolRef, ToolSpec};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Largest accepted request body (the contract's relay limit).
pub(crate) const BODY_LIMIT: usize = 4 * 1024 * 1024;
/// MCP revision we answer with when the client asks for one we do not know.
const PROTOCOL: &str = "2025-06-18";
const KNOWN_PROTOCOLS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// One request as the bridge routes it, whether it came over loopback HTTP
/// (`bridge_conn.rs`) or as a Sandbox MCP relay frame (`relay.rs`).
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

pub(crate) struct Served {
    tools: Vec<ToolSpec>,
    invoker: Arc<dyn ToolInvoker>,
    name: String,
    expected: String,
    stop: CancellationToken,
}

fn random_hex() -> io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn uuid() -> io::Result<String> {
    let hex = random_hex()?;
    // Version 4, RFC 4122 variant.
    let variant = ["8", "9", "a", "b"][usize::from_str_radix(&hex[16..17], 16).unwrap_or(0) % 4];
    Ok(format!(
        "{}-{}-4{}-{}{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[13..16],
        variant,
        &hex[17..20],
        &hex[20..32]
    ))
}

/// A bridge's identity and shared request handler, before any listener serves it.
pub(crate) struct Identity {
    pub name: String,
    pub token: String,
    pub stop: CancellationToken,
    pub served: Arc<Served>,
}

pub(crate) fn identity(
    tools: Vec<ToolSpec>,
    invoker: Arc<dyn ToolInvoker>,
) -> io::Result<Identity> {
    let name = format!("aml_{}", random_hex()?);
    let token = uuid()?;
    let stop = CancellationToken::new();
    let served = Arc::new(Served {
        tools,
        invoker,
        name: name.clone(),
        expected: format!("Bearer {token}"),
        stop: stop.clone(),
    });
    Ok(Identity {
        name,
        token,
        stop,
        served,
    })
}

/// The ACP `McpServer` descriptor of a bridge served at `url`.
pub(crate) fn descriptor(name: &str, url: &str, token: &str) -> Value {
    json!({
        "type": "http",
        "name": name,
        "url": url,
        "headers": [{ "name": "Authorization", "value": format!("Bearer {token}") }],
    })
}

/// A bridge's request handler without its listener, for the Sandbox MCP relay. Holding one
/// does not keep the bridge serving: once the bridge stops, Tool calls are cancelled.
#[derive(Clone)]
pub struct RelayTarget(pub(crate) Arc<Served>);

/// One HTTP answer of the bridge.
pub(crate) struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// `Allow: POST` is owed (a 405).
    pub allow_post: bool,
}

impl RelayTarget {
    /// Routes one relayed request exactly as a loopback connection is routed.
    pub(crate) async fn handle(&self, request: &Request) -> Answer {
        let (status, body, allow_post) = route(&self.0, request).await;
        Answer {
            status,
            body,
            allow_post,
        }
    }
}

/// What a request asks of the bridge: an answer at once, or a Tool call to run first.
pub(crate) enum Routed {
    /// Status, JSON body (empty for none), and whether `Allow: POST` is owed (a 405).
    Answer(u16, Vec<u8>, bool),
    Call {
        id: Value,
        tool: ToolRef,
        input: Value,
    },
}

async fn route(served: &Served, request: &Request) -> (u16, Vec<u8>, bool) {
    match route_sync(served, request) {
        Routed::Answer(status, body, allow_post) => (status, body, allow_post),
        Routed::Call { id, tool, input } => {
            let result = served
                .invoker
                .call(tool, input, served.stop.child_token())
                .await;
            (200, call_answer(id, result), false)
        }
    }
}

/// Routes `request` as far as it goes without running a Tool (sans-IO: both servers use it).
pub(crate) fn route_sync(served: &Served, request: &Request) -> Routed {
    if request.path != "/mcp" || request.authorization.as_deref() != Some(served.expected.as_str())
    {
        return Routed::Answer(404, Vec::new(), false);
    }
    if request.method != "POST" {
        return Routed::Answer(405, Vec::new(), true);
    }
    let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
        return Routed::Answer(400, rpc_error(Value::Null, -32700, "Parse error"), false);
    };
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Routed::Answer(
            400,
            rpc_error(Value::Null, -32600, "Invalid Request"),
            false,
        );
    };
    let Some(id) = message.get("id").cloned() else {
        // Notifications (notifications/initialized, cancelled…) need no answer.
        return Routed::Answer(202, Vec::new(), false);
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => initialize(served, &params),
        "ping" => json!({}),
        "tools/list" => tools_list(served),
        "tools/call" => match tool_call(served, &params) {
            Ok((tool, input)) => return Routed::Call { id, tool, input },
            Err(result) => result,
        },
        other => {
            return Routed::Answer(
                200,
                rpc_error(id, -32601, &format!("Method not found: {other}")),
                false,
            )
        }
    };
    Routed::Answer(200, rpc_result(id, result), false)
}

fn rpc_result(id: Value, result: Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
        .to_string()
        .into_bytes()
}

fn rpc_error(id: Value, code: i64, message: &str) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        .to_string()
        .into_bytes()
}

fn initialize(served: &Served, params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| KNOWN_PROTOCOLS.contains(v))
        .unwrap_or(PROTOCOL);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": served.name, "version": "0.0.0" },
    })
}

fn tools_list(served: &Served) -> Value {
    let tools: Vec<Value> = served
        .tools
        .iter()
        .map(|tool| json!({ "name": tool.name, "description": tool.description, "inputSchema": tool.input_schema }))
        .collect();
    json!({ "tools": tools })
}

fn text_result(text: String, is_error: bool) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if is_error {
        result["isError"] = true.into();
    }
    result
}

/// The Tool and input a `tools/call` names, or the result that answers it at once.
fn tool_call(served: &Served, params: &Value) -> Result<(ToolRef, Value), Value> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(tool) = served.tools.iter().find(|tool| tool.name == name) else {
        return Err(text_result(format!("Unknown AML Tool \"{name}\""), true));
    };
    let input = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    Ok((tool.tool, input))
}

/// The JSON-RPC body answering call `id` with the Tool's outcome (failures are `isError`
/// results the model can read).
pub(crate) fn call_answer(id: Value, outcome: Result<Value, ToolCallError>) -> Vec<u8> {
    let result = match outcome {
        Ok(Value::String(text)) => text_result(text, false),
        Ok(value) => text_result(value.to_string(), false),
        Err(error) if error.message.is_empty() => {
            text_result("AML Tool execution failed".into(), true)
        }
        Err(error) => text_result(error.message, true),
    };
    rpc_result(id, result)
}
