//! JSON-RPC 2.0 frames as ACP uses them. Incoming lines are parsed borrowed (no copy of a
//! large update until it is forwarded), and anything that is not a well-formed message is
//! classified as [`Incoming::Malformed`] instead of failing: a stray log line on stdout must
//! not end a session.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RpcError {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
}

#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// One incoming line, classified.
pub enum Incoming<'a> {
    /// A request from the agent (`session/request_permission`, `fs/*`, …).
    Request {
        id: &'a RawValue,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A reply to one of our requests. `id` is `None` when it is not one of our numeric ids.
    Response {
        id: Option<u64>,
        outcome: Result<&'a RawValue, RpcError>,
    },
    /// A `session/update` notification read in one pass (see [`classify_update_first`]).
    Update(FastUpdate<'a>),
    Malformed,
}

/// A `session/update` notification with its update's head, parsed in a single pass.
#[derive(Deserialize)]
pub struct FastUpdate<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub params: FastParams<'a>,
}

#[derive(Deserialize)]
pub struct FastParams<'a> {
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Cow<'a, str>,
    #[serde(borrow)]
    pub update: UpdateHead<'a>,
}

/// Like [`classify`], but a well-formed `session/update` notification comes back as
/// [`Incoming::Update`] from one pass over the line, instead of a raw `params` that must be
/// scanned again per level. For observers that want no raw copy of the update.
pub fn classify_update_first(line: &[u8]) -> Incoming<'_> {
    if memchr::memmem::find(line, b"\"session/update\"").is_some() {
        if let Ok(update) = serde_json::from_slice::<FastUpdate>(line) {
            if update.id.is_none() && update.method == "session/update" {
                return Incoming::Update(update);
            }
        }
    }
    classify(line)
}

pub fn classify(line: &[u8]) -> Incoming<'_> {
    let Ok(frame) = serde_json::from_slice::<Frame>(line) else {
        return Incoming::Malformed;
    };
    match (frame.method, frame.id) {
        (Some(method), Some(id)) => Incoming::Request {
            id,
            method,
            params: frame.params,
        },
        (Some(method), None) => Incoming::Notification {
            method,
            params: frame.params,
        },
        (None, Some(id)) => {
            let id = serde_json::from_str::<u64>(id.get()).ok();
            let outcome = match (frame.result, frame.error) {
                (_, Some(error)) => Err(error),
                (Some(result), None) => Ok(result),
                (None, None) => return Incoming::Malformed,
            };
            Incoming::Response { id, outcome }
        }
        (None, None) => Incoming::Malformed,
    }
}

/// The parts of a `session/update` notification AML reads; `update` stays raw.
#[derive(Deserialize)]
pub struct UpdateParams<'a> {
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Cow<'a, str>,
    #[serde(borrow)]
    pub update: &'a RawValue,
}

#[derive(Deserialize)]
pub struct UpdateHead<'a> {
    #[serde(rename = "sessionUpdate", borrow)]
    pub session_update: Cow<'a, str>,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct TextContent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// The text of an `agent_message_chunk`'s content block, when it is a text block.
pub fn chunk_text(content: &RawValue) -> Option<Cow<'_, str>> {
    let block = serde_json::from_str::<TextContent>(content.get()).ok()?;
    if block.kind != "text" {
        return None;
    }
    block.text
}

/// A string-valued `name` (the optional programmatic Tool name of a `tool_call`).
pub fn string_name(name: Option<&RawValue>) -> Option<String> {
    serde_json::from_str::<String>(name?.get()).ok()
}

/// One serialised outgoing line (with its newline).
pub fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    line(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
}

pub fn notification(method: &str, params: &Value) -> Vec<u8> {
    line(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
}

pub fn result(id: &RawValue, result: &Value) -> Vec<u8> {
    line(&json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

pub fn error(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    line(&json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }))
}

fn line(value: &Value) -> Vec<u8> {
    // Serialising a `Value` cannot fail (its keys are strings).
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_frames() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#),
            Incoming::Response {
                id: Some(3),
                outcome: Ok(_)
            }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}"#),
            Incoming::Response {
                id: None,
                outcome: Err(RpcError { code: -1, .. })
            }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file"}"#),
            Incoming::Request { .. }
        ));
        for bad in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"res"[..],
            b"[1,2]",
            b"42",
            b"{}",
            b"{\"id\":1}",
            b"\xff",
        ] {
            assert!(matches!(classify(bad), Incoming::Malformed));
        }
        assert!(matches!(classify(br#"{"method":5}"#), Incoming::Malformed));
    }

    #[test]
    fn reads_update_heads_and_chunk_text() {
        let params = br#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"h\u00e9"}}}"#;
        let p: UpdateParams = serde_json::from_slice(params).unwrap();
        let head: UpdateHead = serde_json::from_str(p.update.get()).unwrap();
        assert_eq!(head.session_update, "agent_message_chunk");
        assert_eq!(chunk_text(head.content.unwrap()).unwrap(), "hé");
        let image = RawValue::from_string(r#"{"type":"image","data":""}"#.into()).unwrap();
        assert!(chunk_text(&image).is_none());
        let list = RawValue::from_string("[]".into()).unwrap();
        assert!(chunk_text(&list).is_none());
    }

    #[test]
    fn session_updates_parse_in_one_pass_and_others_fall_back() {
        let line = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
        let Incoming::Update(update) = classify_update_first(line) else {
            panic!("not a fast update")
        };
        assert_eq!(update.params.session_id, "s");
        assert_eq!(update.params.update.session_update, "agent_message_chunk");
        assert_eq!(
            chunk_text(update.params.update.content.unwrap()).unwrap(),
            "hi"
        );
        // Wrong shapes, and a request that mentions the method, take the general path.
        let odd = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":17}}"#;
        assert!(matches!(
            classify_update_first(odd),
            Incoming::Notification { .. }
        ));
        let request = br#"{"jsonrpc":"2.0","id":4,"method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"plan"}}}"#;
        assert!(matches!(
            classify_update_first(request),
            Incoming::Request { .. }
        ));
        let reply = br#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;
        assert!(matches!(
            classify_update_first(reply),
            Incoming::Response { id: Some(3), .. }
        ));
    }
}
