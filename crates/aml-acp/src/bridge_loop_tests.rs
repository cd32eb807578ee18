use std::sync::Arc;

use aml_ports::{ToolCallError, ToolInvoker, ToolRef, ToolSpec};
use async_trait::async_trait;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{Feed, LoopBridge};

struct Unused;

#[async_trait]
impl ToolInvoker for Unused {
    async fn call(
        &self,
        _: ToolRef,
        _: Value,
        _: CancellationToken,
    ) -> Result<Value, ToolCallError> {
        panic!("the loop bridge runs its connections' calls through the host")
    }
}

fn bridge() -> LoopBridge {
    let tools = vec![ToolSpec {
        tool: ToolRef(7),
        name: "add".into(),
        description: "adds".into(),
        input_schema: json!({ "type": "object" }),
    }];
    LoopBridge::new(tools, Arc::new(Unused)).unwrap()
}

fn token(bridge: &LoopBridge) -> String {
    let descriptor = bridge.descriptor(4242);
    assert_eq!(descriptor["url"], "http://127.0.0.1:4242/mcp");
    descriptor["headers"][0]["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn post(auth: &str, body: &Value, extra: &str) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn call(id: u64, a: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "add", "arguments": { "a": a } } })
}

/// The status line and JSON body of each response in `bytes`.
fn responses(bytes: &[u8]) -> Vec<(String, Value)> {
    let mut text = std::str::from_utf8(bytes).unwrap();
    let mut out = Vec::new();
    while !text.is_empty() {
        let (head, rest) = text.split_once("\r\n\r\n").unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        let body = &rest[..length];
        let value = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(body).unwrap()
        };
        out.push((head.lines().next().unwrap().to_owned(), value));
        text = &rest[length..];
    }
    out
}

#[test]
fn a_tool_call_is_handed_to_the_host_and_answered_with_its_outcome() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let feed = bridge.feed(1, &post(&auth, &call(1, 2), ""));
    assert_eq!(feed.call, Some((ToolRef(7), r#"{"a":2}"#.to_owned())));
    assert!(feed.write.is_empty() && !feed.close);
    let feed = bridge.answer(1, Ok(json!({ "sum": 3 })));
    let answers = responses(&feed.write);
    assert_eq!(answers[0].0, "HTTP/1.1 200 OK");
    assert_eq!(answers[0].1["id"], 1);
    assert_eq!(answers[0].1["result"]["content"][0]["text"], r#"{"sum":3}"#);
    assert_eq!(feed.call, None);
}

#[test]
fn failures_are_is_error_results_the_model_can_read() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    bridge.feed(1, &post(&auth, &call(1, 2), ""));
    let failed = ToolCallError::from_js("TypeError".into(), "no".into(), false);
    let answer = &responses(&bridge.answer(1, Err(failed)).write)[0].1["result"];
    assert_eq!(answer["isError"], true);
    assert_eq!(answer["content"][0]["text"], "no");
    bridge.feed(1, &post(&auth, &call(2, 2), ""));
    let silent = ToolCallError::from_js("Error".into(), String::new(), false);
    let answer = &responses(&bridge.answer(1, Err(silent)).write)[0].1["result"];
    assert_eq!(answer["content"][0]["text"], "AML Tool execution failed");
    let unknown =
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "nope" } });
    let feed = bridge.feed(1, &post(&auth, &unknown, ""));
    assert_eq!(feed.call, None);
    let answer = &responses(&feed.write)[0].1["result"];
    assert_eq!(answer["content"][0]["text"], "Unknown AML Tool \"nope\"");
}

#[test]
fn pipelined_requests_wait_for_the_call_ahead_of_them() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let mut bytes = post(&auth, &call(1, 1), "");
    bytes.extend(post(
        &auth,
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }),
        "",
    ));
    bytes.extend(post(&auth, &call(3, 3), ""));
    let feed = bridge.feed(9, &bytes);
    assert_eq!(feed.call, Some((ToolRef(7), r#"{"a":1}"#.to_owned())));
    assert!(feed.write.is_empty());
    let feed = bridge.answer(9, Ok(json!(1)));
    let answers = responses(&feed.write);
    assert_eq!(
        answers
            .iter()
            .map(|a| a.1["id"].clone())
            .collect::<Vec<_>>(),
        [json!(1), json!(2)]
    );
    assert_eq!(feed.call, Some((ToolRef(7), r#"{"a":3}"#.to_owned())));
}

#[test]
fn a_request_split_across_reads_is_answered_once_whole() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let bytes = post(
        &auth,
        &json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list" }),
        "",
    );
    for byte in &bytes[..bytes.len() - 1] {
        assert_eq!(bridge.feed(2, std::slice::from_ref(byte)), Feed::default());
    }
    let feed = bridge.feed(2, &bytes[bytes.len() - 1..]);
    let answers = responses(&feed.write);
    assert_eq!(answers[0].1["result"]["tools"][0]["name"], "add");
}

#[test]
fn wrong_token_path_or_method_and_bad_framing_follow_the_bridge_rules() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    let feed = bridge.feed(1, &post("Bearer wrong", &ping, ""));
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 404 Not Found");
    assert!(!feed.close, "a 404 keeps the connection open");
    let get = format!("GET /mcp HTTP/1.1\r\nAuthorization: {auth}\r\n\r\n");
    let feed = bridge.feed(1, get.as_bytes());
    assert_eq!(
        responses(&feed.write)[0].0,
        "HTTP/1.1 405 Method Not Allowed"
    );
    assert!(String::from_utf8_lossy(&feed.write).contains("Allow: POST\r\n"));
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nAuthorization: {auth}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let feed = bridge.feed(1, chunked.as_bytes());
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 411 Length Required");
    assert!(feed.close);
    assert_eq!(
        bridge.feed(1, &post(&auth, &ping, "")),
        Feed::default(),
        "a closed connection reads nothing more"
    );
}

#[test]
fn oversized_heads_and_bodies_are_refused_without_buffering_them() {
    let mut bridge = bridge();
    let feed = bridge.feed(1, &vec![b'a'; 70 * 1024]);
    assert_eq!(
        responses(&feed.write)[0].0,
        "HTTP/1.1 431 Request Header Fields Too Large"
    );
    assert!(feed.close);
    let auth = token(&bridge);
    let huge =
        format!("POST /mcp HTTP/1.1\r\nAuthorization: {auth}\r\nContent-Length: 5000000\r\n\r\n");
    let feed = bridge.feed(2, huge.as_bytes());
    assert_eq!(
        responses(&feed.write)[0].0,
        "HTTP/1.1 413 Payload Too Large"
    );
}

#[test]
fn connection_close_closes_after_the_answer_and_dropped_connections_are_forgotten() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let feed = bridge.feed(3, &post(&auth, &call(1, 1), "Connection: close\r\n"));
    assert!(feed.call.is_some() && !feed.close);
    let feed = bridge.answer(3, Ok(json!(2)));
    assert!(feed.close);
    assert_eq!(responses(&feed.write).len(), 1);
    bridge.feed(4, &post(&auth, &call(1, 1), ""));
    assert_eq!(bridge.connections(), 2);
    bridge.drop_connection(3);
    bridge.drop_connection(4);
    assert_eq!(
        bridge.answer(4, Ok(json!(2))),
        Feed::default(),
        "no answer is owed to a closed connection"
    );
    assert_eq!(bridge.connections(), 0);
}

#[test]
fn notifications_are_accepted_without_a_body() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let feed = bridge.feed(1, &post(&auth, &note, ""));
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 202 Accepted");
}

#[test]
fn initialize_negotiates_a_known_revision_and_tools_list_names_the_lent_tools() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let name = bridge.name.clone();
    for (asked, answered) in [("2025-03-26", "2025-03-26"), ("1999-01-01", "2025-06-18")] {
        let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": asked, "capabilities": {} } });
        let feed = bridge.feed(1, &post(&auth, &init, ""));
        let answers = responses(&feed.write);
        assert_eq!(answers[0].1["result"]["protocolVersion"], answered);
        assert_eq!(answers[0].1["result"]["serverInfo"]["name"], name.as_str());
    }
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let answers = responses(&bridge.feed(1, &post(&auth, &list, "")).write);
    assert_eq!(
        answers[0].1["result"]["tools"],
        json!([{ "name": "add", "description": "adds", "inputSchema": { "type": "object" } }])
    );
}

#[test]
fn ambiguous_or_malformed_framing_is_refused_and_closes() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    // Two different lengths could make a proxy and the bridge disagree on where the next
    // request starts (request smuggling); the hand-written parser took the last one.
    let twice = format!(
        "POST /mcp HTTP/1.1\r\nAuthorization: {auth}\r\nContent-Length: 2\r\nContent-Length: 4\r\n\r\n{{}}{{}}"
    );
    let feed = bridge.feed(1, twice.as_bytes());
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 400 Bad Request");
    assert!(feed.close);
    let feed = bridge.feed(2, b"POST /mcp HTTP/1.1\r\nContent-Length: x\r\n\r\n");
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 400 Bad Request");
    assert!(feed.close);
    let feed = bridge.feed(3, b"\x01\x02 nonsense\r\n\r\n");
    assert_eq!(responses(&feed.write)[0].0, "HTTP/1.1 400 Bad Request");
    assert!(feed.close);
}

#[test]
fn a_body_arriving_in_pieces_and_keep_alive_reuse_are_served() {
    let mut bridge = bridge();
    let auth = token(&bridge);
    let request = post(&auth, &call(1, 5), "");
    let (first, rest) = request.split_at(request.len() - 3);
    let feed = bridge.feed(1, first);
    assert_eq!(feed, Feed::default(), "nothing until the body is whole");
    let feed = bridge.feed(1, rest);
    assert_eq!(feed.call, Some((ToolRef(7), r#"{"a":5}"#.to_owned())));
    let feed = bridge.answer(1, Ok(json!(6)));
    assert!(!feed.close);
    assert_eq!(responses(&feed.write)[0].1["id"], 1);
    let feed = bridge.feed(1, &post(&auth, &call(2, 6), ""));
    assert_eq!(feed.call, Some((ToolRef(7), r#"{"a":6}"#.to_owned())));
}
