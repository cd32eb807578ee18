//! The client flow against a fake agent: start-up, turns, permissions, configuration,
//! capabilities, cleanup.

mod common;

use aml_acp::{ConfigEntry, ConfigTarget, ErrorKind, Event, PermissionPolicy};
use common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_stream_updates_and_cleanup_is_ordered() {
    let (session, opened) = open(config(&[])).await;
    assert_eq!(states(&opened), ["spawn_requested", "started"]);
    match &opened[0] {
        Event::Process(fact) => assert_eq!(
            fact.command.as_deref(),
            Some(format!("node {}", fixture()).as_str())
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        opened.last(),
        Some(&Event::Created {
            session_id: "s-1".into()
        })
    );
    let pid = leader_pid(&opened);

    let first = turn(&session, "hello").await;
    let updates: Vec<_> = first
        .iter()
        .filter_map(|event| match event {
            Event::Update {
                session_id,
                session_update,
                tool_name,
                update,
            } => Some((
                session_id.as_str(),
                session_update.as_str(),
                tool_name.clone(),
                update.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 3);
    assert_eq!(updates[0].1, "agent_message_chunk");
    assert_eq!(updates[0].0, "s-1");
    let raw: Value = serde_json::from_str(updates[0].3.as_ref().unwrap()).unwrap();
    assert_eq!(
        raw,
        json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "Hel" } })
    );
    assert_eq!(
        (updates[2].1, updates[2].2.as_deref()),
        ("tool_call", Some("read_file"))
    );
    match first.last() {
        Some(Event::Completed {
            stop_reason,
            usage,
            text,
        }) => {
            assert_eq!((stop_reason.as_str(), text.as_str()), ("end_turn", "Hello"));
            let usage: Value = serde_json::from_str(usage.as_deref().unwrap()).unwrap();
            assert_eq!(usage["totalTokens"], 5);
        }
        other => panic!("{other:?}"),
    }
    // The second turn's text does not include the first one's.
    assert_eq!(text(&turn(&session, "again").await), "echo:again");
    match turn(&session, "echo-init").await.last() {
        Some(Event::Completed {
            usage: None, text, ..
        }) => {
            let init: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                init,
                json!({
                    "protocolVersion": 1,
                    "clientCapabilities": {},
                    "clientInfo": { "name": "aml", "title": "Agent Markup Language", "version": "0.0.0" },
                })
            );
        }
        other => panic!("{other:?}"),
    }
    let closed = close(&session).await;
    let states = states(&closed);
    assert_eq!(&states[..2], ["kill_requested", "kill_completed"]);
    assert!(states.len() == 2 || states[2] == "exited", "{states:?}");
    assert_eq!(
        closed.last(),
        Some(&Event::Closed {
            session_errors: vec![],
            resource_errors: vec![]
        })
    );
    assert!(!alive(pid));
    assert!(session.next(8).await.is_empty(), "nothing follows Closed");
}

async fn permission_answer(policy: PermissionPolicy, kinds: &str) -> Value {
    let mut config = config(&[]);
    config.session.permission_policy = policy;
    let (session, _) = open(config).await;
    let answer = text(&turn(&session, &format!("permission:{kinds}")).await);
    close(&session).await;
    serde_json::from_str(&answer).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_requests_follow_the_policy() {
    use PermissionPolicy::*;
    let all = "allow_once,allow_always,reject_once,reject_always";
    let selected = |id: &str| json!({ "outcome": { "outcome": "selected", "optionId": id } });
    assert_eq!(
        permission_answer(AllowOnce, all).await,
        selected("o0-allow_once")
    );
    assert_eq!(
        permission_answer(AllowAlways, all).await,
        selected("o1-allow_always")
    );
    assert_eq!(
        permission_answer(RejectOnce, all).await,
        selected("o2-reject_once")
    );
    assert_eq!(
        permission_answer(RejectAlways, all).await,
        selected("o3-reject_always")
    );
    assert_eq!(
        permission_answer(AllowAlways, "allow_once,reject_once").await,
        selected("o0-allow_once")
    );
    assert_eq!(
        permission_answer(RejectAlways, "allow_once,reject_once").await,
        selected("o1-reject_once")
    );
    let cancelled = json!({ "outcome": { "outcome": "cancelled" } });
    assert_eq!(permission_answer(AllowOnce, "reject_once").await, cancelled);
    assert_eq!(
        permission_answer(RejectOnce, "allow_always").await,
        cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_we_do_not_serve_get_method_not_found() {
    let (session, _) = open(config(&[])).await;
    let answer: Value =
        serde_json::from_str(&text(&turn(&session, "unknown-request").await)).unwrap();
    assert_eq!(answer["error"]["code"], -32601);
    close(&session).await;
}

const CONFIG: &str = r#"[
  {"id":"model","name":"Model","category":"model","type":"select","currentValue":"a",
   "options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]},
  {"id":"think","name":"Thinking","category":"thought_level","type":"select","currentValue":"low",
   "options":[{"group":"g","name":"G","options":[{"value":"high","name":"High"}]}]},
  {"id":"yolo","name":"Yolo","type":"boolean","currentValue":false}
]"#;

fn entry(target: ConfigTarget, value: Value) -> ConfigEntry {
    ConfigEntry { target, value }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_is_applied_in_order() {
    let mut config = config(&[("FAKE_CONFIG", CONFIG)]);
    config.session.configuration = vec![
        entry(ConfigTarget::Category("model".into()), json!("b")),
        entry(
            ConfigTarget::Category("thought_level".into()),
            json!("high"),
        ),
        entry(ConfigTarget::Id("yolo".into()), json!(true)),
    ];
    let (session, opened) = open(config).await;
    let applied: Vec<String> = opened
        .iter()
        .filter_map(|event| match event {
            Event::Update { update, .. } => {
                let update: Value = serde_json::from_str(update.as_ref()?).unwrap();
                Some(update["content"]["text"].as_str()?.to_owned())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        applied,
        [
            "config:model=\"b\"",
            "config:think=\"high\"",
            "config:yolo=true"
        ]
    );
    assert!(matches!(opened.last(), Some(Event::Created { .. })));
    // Start-up text never leaks into the first turn.
    assert_eq!(text(&turn(&session, "x").await), "echo:x");
    close(&session).await;
}

async fn start_failure(config: aml_acp::SessionConfig) -> aml_acp::AcpError {
    let (session, opened) = open(config).await;
    let error = failure(&opened);
    let closed = close(&session).await;
    assert!(matches!(closed.last(), Some(Event::Closed { .. })));
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_errors_are_exact() {
    let cases = [
        (
            entry(ConfigTarget::Category("mode".into()), json!("x")),
            "ACP Agent does not advertise requested session configuration category \"mode\"",
        ),
        (
            entry(ConfigTarget::Id("nope".into()), json!("x")),
            "ACP Agent does not advertise requested session configuration id \"nope\"",
        ),
        (
            entry(ConfigTarget::Id("yolo".into()), json!("on")),
            "ACP session configuration \"yolo\" requires a boolean value",
        ),
        (
            entry(ConfigTarget::Id("model".into()), json!(false)),
            "ACP session configuration \"model\" requires a selected value id",
        ),
        (
            entry(ConfigTarget::Id("model".into()), json!("c")),
            "ACP session configuration \"model\" does not advertise value \"c\"",
        ),
    ];
    for (entry, message) in cases {
        let mut config = config(&[("FAKE_CONFIG", CONFIG)]);
        config.session.configuration = vec![entry];
        let error = start_failure(config).await;
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Capability, message)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_need_the_advertised_transport() {
    let http =
        json!({ "type": "http", "name": "docs", "url": "http://127.0.0.1:9/mcp", "headers": [] });
    let sse =
        json!({ "type": "sse", "name": "events", "url": "http://127.0.0.1:9/sse", "headers": [] });
    let stdio = json!({ "name": "files", "command": "mcp-files", "args": [], "env": [] });
    let mut refused = config(&[]);
    refused.session.mcp_servers = vec![stdio.clone(), http.clone()];
    let error = start_failure(refused).await;
    assert_eq!(
        error.message,
        "ACP Agent does not advertise HTTP MCP support required by server \"docs\""
    );
    let mut refused = config(&[("FAKE_MCP_HTTP", "1")]);
    refused.session.mcp_servers = vec![http.clone(), sse];
    let error = start_failure(refused).await;
    assert_eq!(
        error.message,
        "ACP Agent does not advertise SSE MCP support required by server \"events\""
    );
    let mut accepted = config(&[("FAKE_MCP_HTTP", "1")]);
    accepted.session.mcp_servers = vec![http, stdio];
    let (session, opened) = open(accepted).await;
    assert!(matches!(opened.last(), Some(Event::Created { .. })));
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_runs_before_the_session() {
    let mut ok = config(&[]);
    ok.session.authentication_method_id = Some("api-key".into());
    let (session, opened) = open(ok).await;
    assert!(matches!(opened.last(), Some(Event::Created { .. })));
    close(&session).await;
    let mut bad = config(&[]);
    bad.session.authentication_method_id = Some("oauth".into());
    let error = start_failure(bad).await;
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::Agent, "unknown method")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_is_named() {
    let mut missing = config(&[]);
    missing.launch.command = "definitely-missing-acp-agent".into();
    let session = Agent::start(missing);
    let events = until(&session, is_closed).await;
    assert_eq!(states(&events), ["spawn_requested"]);
    let error = match &events[1] {
        Event::Failed(error) => error.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(error.kind, ErrorKind::Spawn);
    assert_eq!(error.code.as_deref(), Some("ENOENT"));
    assert_eq!(
        error.message,
        "ACP Agent command \"definitely-missing-acp-agent\" was not found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_directory_is_removed_after_the_process() {
    let state = aml_acp::create_state_directory(&std::env::temp_dir()).unwrap();
    std::fs::write(state.join("config.json"), "{}").unwrap();
    let mut config = config(&[]);
    config.state_directory = Some(state.clone());
    let (session, _) = open(config).await;
    assert!(state.exists());
    close(&session).await;
    assert!(!state.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_detail_follows_the_observer() {
    let (session, _) = open(config(&[])).await;
    session.set_detail(aml_acp::Detail::Metadata);
    let metadata = turn(&session, "hello").await;
    let updates: Vec<_> = metadata
        .iter()
        .filter_map(|event| match event {
            Event::Update {
                session_update,
                tool_name,
                update,
                ..
            } => Some((session_update.clone(), tool_name.clone(), update.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 3);
    assert!(updates.iter().all(|(_, _, update)| update.is_none()));
    assert_eq!(updates[2].1.as_deref(), Some("read_file"));
    assert_eq!(text(&metadata), "Hello");
    session.set_detail(aml_acp::Detail::None);
    let quiet = turn(&session, "hello").await;
    assert!(!quiet
        .iter()
        .any(|event| matches!(event, Event::Update { .. })));
    // The turn's text is gathered whatever the observer wants.
    assert_eq!(text(&quiet), "Hello");
    close(&session).await;
}
