//! The host side of the Sandbox MCP relay, driven through the external port exactly as the
//! binding's pump drives it: the readiness line, request frames routed through the bridge
//! (its authentication included), the documented failures, and the kill on close.

use std::sync::Arc;
use std::time::Duration;

use aml_acp::{external, ExternalExit, ExternalPort, LoopBridge, Pipe, Relay, INVALID_READINESS};
use aml_ports::{ToolCallError, ToolInvoker, ToolRef, ToolSpec};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

struct Doubler;

#[async_trait::async_trait]
impl ToolInvoker for Doubler {
    async fn call(
        &self,
        _: ToolRef,
        input: Value,
        _: CancellationToken,
    ) -> Result<Value, ToolCallError> {
        Ok(json!({ "twice": input["n"].as_i64().unwrap_or(0) * 2 }))
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        tool: ToolRef(1),
        name: "double".into(),
        description: "Doubles".into(),
        input_schema: json!({ "type": "object" }),
    }]
}

/// The pump's duty for kills: answer each request at once (the process "died").
fn answer_kills(port: &Arc<ExternalPort>) {
    let port = Arc::clone(port);
    tokio::spawn(async move {
        port.kill_requested().await;
        port.end(Pipe::Stdout);
        port.end(Pipe::Stderr);
        port.exited(ExternalExit::Signaled(libc_sigkill()));
        port.killed();
    });
}

fn libc_sigkill() -> i32 {
    9
}

async fn next_frame(port: &ExternalPort) -> Value {
    let bytes = tokio::time::timeout(Duration::from_secs(10), port.next_input())
        .await
        .expect("an answer frame in time")
        .expect("stdin open");
    assert_eq!(bytes.last(), Some(&b'\n'));
    serde_json::from_slice(&bytes).unwrap()
}

fn request(id: u64, auth: Option<&str>, method: &str, body: &Value) -> Vec<u8> {
    let frame = json!({
        "kind": "request", "id": id, "method": method, "path": "/mcp?x=1", "authorization": auth,
        "body": STANDARD.encode(body.to_string()),
    });
    format!("{frame}\n").into_bytes()
}

fn body(frame: &Value) -> Value {
    let bytes = STANDARD.decode(frame["body"].as_str().unwrap()).unwrap();
    if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes_frames_through_the_bridge_and_kills_on_close() {
    let bridge = LoopBridge::new(tools(), Arc::new(Doubler)).unwrap();
    // The descriptor's one header is the bearer authorization a relayed request must carry.
    let auth = bridge.descriptor(1)["headers"][0]["value"]
        .as_str()
        .unwrap()
        .to_owned();
    let (agent, port) = external("relay:1".into());
    answer_kills(&port);
    let relay = Relay::start(bridge.relay_target(), agent, Duration::from_millis(100));
    // The readiness line may arrive split across chunks.
    assert!(port.feed(Pipe::Stdout, b"{\"kind\":\"rea".to_vec()).await);
    assert!(
        port.feed(Pipe::Stdout, b"dy\",\"port\":4321}\n".to_vec())
            .await
    );
    assert_eq!(relay.ready().await, Ok(4321));

    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "double", "arguments": { "n": 21 } } });
    assert!(
        port.feed(Pipe::Stdout, request(1, Some(&auth), "POST", &call))
            .await
    );
    let answer = next_frame(&port).await;
    assert_eq!(answer["kind"], "response");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["status"], 200);
    assert_eq!(
        body(&answer)["result"]["content"][0]["text"],
        "{\"twice\":42}"
    );

    // The relay is transport only: the bridge still checks the token and the method.
    assert!(
        port.feed(
            Pipe::Stdout,
            request(2, Some("Bearer wrong"), "POST", &call)
        )
        .await
    );
    let refused = next_frame(&port).await;
    assert_eq!(
        (refused["id"].clone(), refused["status"].clone()),
        (json!(2), json!(404))
    );
    assert!(
        port.feed(Pipe::Stdout, request(3, Some(&auth), "GET", &Value::Null))
            .await
    );
    let wrong = next_frame(&port).await;
    assert_eq!(
        (wrong["status"].clone(), wrong["allow"].clone()),
        (json!(405), json!("POST"))
    );
    // A frame that is not a request is ignored; the next one is still served.
    assert!(
        port.feed(Pipe::Stdout, b"{\"kind\":\"noise\"}\nnot json\n".to_vec())
            .await
    );
    let list = json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/list" });
    assert!(
        port.feed(Pipe::Stdout, request(4, Some(&auth), "POST", &list))
            .await
    );
    let listed = next_frame(&port).await;
    assert_eq!(listed["id"], 4);
    assert_eq!(body(&listed)["result"]["tools"][0]["name"], "double");

    assert_eq!(relay.close().await, Vec::<String>::new());
    // Closing stops serving: stdin is closed.
    let closed = tokio::time::timeout(Duration::from_secs(5), port.next_input())
        .await
        .unwrap();
    assert_eq!(closed, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_readiness_message_is_the_documented_failure() {
    let bridge = LoopBridge::new(tools(), Arc::new(Doubler)).unwrap();
    for line in [
        &b"hello\n"[..],
        b"{\"kind\":\"ready\",\"port\":70000}\n",
        b"{\"kind\":\"ready\",\"port\":0}\n",
        b"[1]\n",
    ] {
        let (agent, port) = external("relay:2".into());
        answer_kills(&port);
        let relay = Relay::start(bridge.relay_target(), agent, Duration::from_millis(100));
        assert!(port.feed(Pipe::Stdout, line.to_vec()).await);
        assert_eq!(relay.ready().await, Err(INVALID_READINESS.to_owned()));
        assert_eq!(relay.close().await, Vec::<String>::new());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_before_readiness_reports_stderr_or_the_exit() {
    let bridge = LoopBridge::new(tools(), Arc::new(Doubler)).unwrap();
    let (agent, port) = external("relay:3".into());
    let relay = Relay::start(bridge.relay_target(), agent, Duration::from_millis(100));
    assert!(
        port.feed(Pipe::Stderr, b"  listen EADDRINUSE\n".to_vec())
            .await
    );
    port.end(Pipe::Stderr);
    port.end(Pipe::Stdout);
    port.exited(ExternalExit::Exited(1));
    assert_eq!(
        relay.ready().await,
        Err("Sandbox MCP relay failed: listen EADDRINUSE".to_owned())
    );

    let (agent, port) = external("relay:4".into());
    let relay = Relay::start(bridge.relay_target(), agent, Duration::from_millis(100));
    port.end(Pipe::Stderr);
    port.end(Pipe::Stdout);
    port.exited(ExternalExit::Exited(127));
    assert_eq!(
        relay.ready().await,
        Err("Sandbox MCP relay failed: exit code 127".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_that_ends_while_needed_is_a_cleanup_failure() {
    let bridge = LoopBridge::new(tools(), Arc::new(Doubler)).unwrap();
    let (agent, port) = external("relay:5".into());
    answer_kills(&port);
    let relay = Relay::start(bridge.relay_target(), agent, Duration::from_millis(100));
    assert!(
        port.feed(Pipe::Stdout, b"{\"kind\":\"ready\",\"port\":1}\n".to_vec())
            .await
    );
    assert_eq!(relay.ready().await, Ok(1));
    assert!(port.feed(Pipe::Stderr, b"out of memory\n".to_vec()).await);
    port.end(Pipe::Stderr);
    port.end(Pipe::Stdout);
    port.exited(ExternalExit::Exited(134));
    // Give the reader its turn to see the end.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        relay.close().await,
        vec!["Sandbox MCP relay failed: out of memory".to_owned()]
    );
}
