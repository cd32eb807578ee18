//! The MCP bridge over real loopback HTTP: auth and routing rules, tools/list, tools/call
//! through a fake ToolInvoker, failures as isError results.

use std::sync::Arc;

use aml_acp::start_bridge;
use aml_ports::{ToolCallError, ToolErrorKind, ToolInvoker, ToolRef, ToolSpec};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

struct Fake;

#[async_trait::async_trait]
impl ToolInvoker for Fake {
    async fn call(
        &self,
        tool: ToolRef,
        input: Value,
        _: CancellationToken,
    ) -> Result<Value, ToolCallError> {
        match tool.0 {
            1 => Ok(
                json!({ "sum": input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0) }),
            ),
            2 => Ok(json!("plain text")),
            3 => Err(ToolCallError {
                kind: ToolErrorKind::Input,
                name: "ToolInputError".into(),
                message: "a must be a number".into(),
            }),
            _ => Err(ToolCallError {
                kind: ToolErrorKind::Failed,
                name: "Error".into(),
                message: String::new(),
            }),
        }
    }
}

fn spec(tool: u32, name: &str) -> ToolSpec {
    ToolSpec {
        tool: ToolRef(tool),
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({ "type": "object" }),
    }
}

/// One HTTP exchange on a fresh connection: (status, body).
async fn exchange(
    url: &str,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: &str,
) -> (u16, String) {
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

async fn rpc(url: &str, token: &str, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }).to_string();
    let (status, body) =
        exchange(url, "POST", "/mcp", Some(&format!("Bearer {token}")), &body).await;
    assert_eq!(status, 200);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["id"], 7);
    reply["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_and_authentication() {
    let bridge = start_bridge(vec![spec(1, "add")], Arc::new(Fake))
        .await
        .unwrap();
    assert!(
        bridge.name.starts_with("aml_") && bridge.name.len() == 36,
        "{}",
        bridge.name
    );
    assert_eq!(bridge.token.len(), 36);
    let bearer = format!("Bearer {}", bridge.token);
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    assert_eq!(
        exchange(&bridge.url, "POST", "/mcp", None, &list).await.0,
        404
    );
    assert_eq!(
        exchange(&bridge.url, "POST", "/mcp", Some("Bearer wrong"), &list)
            .await
            .0,
        404
    );
    assert_eq!(
        exchange(&bridge.url, "POST", "/other", Some(&bearer), &list)
            .await
            .0,
        404
    );
    assert_eq!(
        exchange(&bridge.url, "GET", "/mcp", Some(&bearer), "")
            .await
            .0,
        405
    );
    assert_eq!(
        exchange(&bridge.url, "DELETE", "/mcp", Some(&bearer), "")
            .await
            .0,
        405
    );
    assert_eq!(
        exchange(&bridge.url, "POST", "/mcp", Some(&bearer), "{not json")
            .await
            .0,
        400
    );
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    assert_eq!(
        exchange(&bridge.url, "POST", "/mcp", Some(&bearer), &note).await,
        (202, String::new())
    );
    assert_eq!(
        bridge.descriptor(),
        json!({ "type": "http", "name": bridge.name, "url": bridge.url, "headers": [{ "name": "Authorization", "value": bearer }] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_list_and_call() {
    let tools = vec![
        spec(1, "add"),
        spec(2, "text"),
        spec(3, "strict"),
        spec(4, "broken"),
    ];
    let bridge = start_bridge(tools, Arc::new(Fake)).await.unwrap();
    let init = rpc(
        &bridge.url,
        &bridge.token,
        "initialize",
        json!({ "protocolVersion": "2025-03-26", "capabilities": {} }),
    )
    .await;
    assert_eq!(init["protocolVersion"], "2025-03-26");
    assert_eq!(init["serverInfo"]["name"], bridge.name.as_str());
    let list = rpc(&bridge.url, &bridge.token, "tools/list", json!({})).await;
    assert_eq!(
        list["tools"][0],
        json!({ "name": "add", "description": "add tool", "inputSchema": { "type": "object" } })
    );
    assert_eq!(list["tools"].as_array().unwrap().len(), 4);
    let call = |name: &str, arguments: Value| {
        let (url, token) = (bridge.url.clone(), bridge.token.clone());
        let name = name.to_owned();
        async move {
            rpc(
                &url,
                &token,
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            )
            .await
        }
    };
    assert_eq!(
        call("add", json!({ "a": 2, "b": 3 })).await,
        json!({ "content": [{ "type": "text", "text": "{\"sum\":5}" }] })
    );
    assert_eq!(
        call("text", json!({})).await,
        json!({ "content": [{ "type": "text", "text": "plain text" }] })
    );
    assert_eq!(
        call("strict", json!({})).await,
        json!({ "content": [{ "type": "text", "text": "a must be a number" }], "isError": true })
    );
    assert_eq!(
        call("broken", json!({})).await,
        json!({ "content": [{ "type": "text", "text": "AML Tool execution failed" }], "isError": true })
    );
    assert_eq!(
        call("missing", json!({})).await,
        json!({ "content": [{ "type": "text", "text": "Unknown AML Tool \"missing\"" }], "isError": true })
    );
    bridge.stop();
}
