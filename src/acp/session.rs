//! Binding for the ACP engine (`crates/aml-acp`): sessions by small integer handle, commands
//! as plain calls, and one pull-based event stream per session (`acpSessionNext` resolves
//! with every event available, as a JSON array, so a flood of updates costs one Promise per
//! batch, not per update). Conversions only; the protocol lives in the crate.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use aml_acp::{
    ConfigEntry, ConfigTarget, Detail, Event, Launch, LaunchFile, LaunchFileError, Limits,
    PermissionPolicy, Session, SessionConfig, SessionSpec,
};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::boundary::handles::Handles;

use crate::boundary::async_runtime::{runtime, spawn_promise};
use crate::boundary::guard::guard;

/// Events handed over per `acpSessionNext` at most.
const BATCH: usize = 4096;

// Below RELAY_PORT_BIT: the external ports of relays share the port table with sessions.
static SESSIONS: Handles<Session> = Handles::below(crate::acp::ports::RELAY_PORT_BIT);

fn session(handle: u32) -> Result<Arc<Session>> {
    SESSIONS
        .get(handle)
        .ok_or_else(|| Error::from_reason("ACP session handle is closed"))
}

fn invalid(detail: impl std::fmt::Display) -> Error {
    Error::new(
        Status::InvalidArg,
        format!("invalid ACP session config: {detail}"),
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigJson {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Vec<(String, String)>,
    inherit_env: bool,
    cwd: String,
    session_cwd: String,
    #[serde(default)]
    mcp_servers: Vec<Value>,
    authentication_method_id: Option<String>,
    #[serde(default)]
    configuration: Vec<Map<String, Value>>,
    permission_policy: String,
    state_directory: Option<String>,
    startup_request_ms: Option<u64>,
}

fn config_entry(mut entry: Map<String, Value>) -> Result<ConfigEntry> {
    let value = entry
        .remove("value")
        .ok_or_else(|| invalid("configuration value"))?;
    let target = match (entry.remove("category"), entry.remove("id")) {
        (Some(Value::String(c)), None) => ConfigTarget::Category(c),
        (None, Some(Value::String(i))) => ConfigTarget::Id(i),
        _ => return Err(invalid("configuration target")),
    };
    Ok(ConfigEntry { target, value })
}

pub(crate) fn parse_config(text: &str) -> Result<SessionConfig> {
    let config: ConfigJson = serde_json::from_str(text).map_err(invalid)?;
    let permission_policy =
        PermissionPolicy::parse(&config.permission_policy).ok_or_else(|| invalid("policy"))?;
    let configuration = config
        .configuration
        .into_iter()
        .map(config_entry)
        .collect::<Result<Vec<_>>>()?;
    let defaults = Limits::default();
    let millis = |ms: Option<u64>, default| ms.map(Duration::from_millis).unwrap_or(default);
    Ok(SessionConfig {
        launch: Launch {
            command: config.command,
            args: config.args,
            env: config.env,
            inherit_env: config.inherit_env,
            cwd: PathBuf::from(config.cwd),
        },
        session: SessionSpec {
            cwd: config.session_cwd,
            mcp_servers: config.mcp_servers,
            authentication_method_id: config.authentication_method_id,
            configuration,
            permission_policy,
            detail: Default::default(),
        },
        limits: Limits {
            startup_request: millis(config.startup_request_ms, defaults.startup_request),
            ..defaults
        },
        state_directory: config.state_directory.map(PathBuf::from),
    })
}

/// Starts a session (spawn and start-up run on the process runtime) and returns its handle.
#[napi]
pub fn acp_session_start(config: String) -> Result<u32> {
    guard(|| {
        let config = parse_config(&config)?;
        let _entered = runtime().enter();
        Ok(insert(Session::start(config)))
    })
}

/// Files a started session under a fresh handle.
pub(crate) fn insert(session: Session) -> u32 {
    SESSIONS.insert(session)
}

fn event_json(event: Event) -> Value {
    match event {
        Event::Process(fact) => {
            let mut out = json!({ "kind": "process", "state": fact.state });
            if let Some(id) = fact.execution_id {
                out["executionId"] = id.into();
            }
            if let Some(code) = fact.exit_code {
                out["exitCode"] = code.into();
            }
            if let Some(command) = fact.command {
                out["command"] = command.into();
            }
            out
        }
        Event::Created { session_id } => json!({ "kind": "created", "sessionId": session_id }),
        // `write_events` writes updates itself; this arm only keeps the match total, through
        // the same writer, so an update has one encoding.
        update @ Event::Update { .. } => {
            let mut out = Vec::new();
            write_update(&mut out, update);
            serde_json::from_slice(&out).unwrap_or(Value::Null)
        }
        Event::Completed {
            stop_reason,
            usage,
            text,
        } => {
            let mut out = json!({ "kind": "completed", "stopReason": stop_reason, "text": text });
            if let Some(usage) = usage {
                // `tokens`: the same usage in AML's field names (issue 37), for the Agent's
                // AgentResponse.usage; `usage` stays the agent's JSON for the trace events.
                if let Some(tokens) = serde_json::from_str(&usage)
                    .ok()
                    .as_ref()
                    .and_then(aml_engine::acp_usage)
                {
                    out["tokens"] = tokens;
                }
                out["usage"] = usage.into();
            }
            out
        }
        Event::Failed(error) => {
            let kind = format!("{:?}", error.kind).to_lowercase();
            let mut out = json!({ "kind": "failed", "errorKind": kind, "message": error.message });
            if let Some(code) = error.code {
                out["code"] = code.into();
            }
            out
        }
        Event::Closed {
            session_errors,
            resource_errors,
        } => json!({
            "kind": "closed", "sessionErrors": session_errors, "resourceErrors": resource_errors,
        }),
    }
}

/// An update event's JSON object, written field by field (keys in the order `json!` sorts
/// them): no `Value` tree per update, one escape pass over the raw update text.
fn write_update(out: &mut Vec<u8>, event: Event) {
    let Event::Update {
        session_id,
        session_update,
        tool_name,
        update,
    } = event
    else {
        // Both callers match an update first; any other event has no update encoding.
        return;
    };
    // Writing to a Vec cannot fail.
    out.extend_from_slice(br#"{"kind":"update","sessionId":"#);
    let _ = serde_json::to_writer(&mut *out, &session_id);
    out.extend_from_slice(br#","sessionUpdate":"#);
    let _ = serde_json::to_writer(&mut *out, &session_update);
    if let Some(tool) = tool_name {
        out.extend_from_slice(br#","toolName":"#);
        let _ = serde_json::to_writer(&mut *out, &tool);
    }
    if let Some(update) = update {
        out.extend_from_slice(br#","update":"#);
        let _ = serde_json::to_writer(&mut *out, &update);
    }
    out.push(b'}');
}

/// One JSON array for a batch. Updates (the flood case) are written field by field into one
/// buffer: no `Value` tree per update, one escape pass over the raw update text.
fn write_events(events: Vec<Event>) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(64 * events.len() + 2);
    out.push(b'[');
    for (index, event) in events.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        // Writing to a Vec cannot fail.
        match event {
            update @ Event::Update { .. } => write_update(&mut out, update),
            other => {
                let _ = serde_json::to_writer(&mut out, &event_json(other));
            }
        }
    }
    out.push(b']');
    // serde_json writes UTF-8 only.
    String::from_utf8(out)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// The events available now, as a JSON array; `[]` once the session has ended.
///
/// `detail` is what the observer wants of the updates from now on: 0 none (nobody traces),
/// 1 metadata (no listener takes content), 2 the raw update JSON too.
#[napi(ts_return_type = "Promise<string>")]
pub fn acp_session_next(env: &Env, handle: u32, detail: u32) -> Result<Object<'_>> {
    let session = guard(|| session(handle))?;
    guard(|| {
        session.set_detail(match detail {
            0 => Detail::None,
            1 => Detail::Metadata,
            _ => Detail::Full,
        });
        Ok(())
    })?;
    let next = async move { Ok(write_events(session.next(BATCH).await)) };
    spawn_promise(env, next, |_, text| Ok(text))
}

#[napi]
pub fn acp_session_prompt(handle: u32, text: String) -> Result<()> {
    guard(|| {
        session(handle)?.prompt(text);
        Ok(())
    })
}

#[napi]
pub fn acp_session_cancel(handle: u32) -> Result<()> {
    guard(|| {
        session(handle)?.cancel();
        Ok(())
    })
}

#[napi]
pub fn acp_session_close(handle: u32) -> Result<()> {
    guard(|| {
        session(handle)?.close();
        Ok(())
    })
}

/// Forgets a session; dropping the last reference closes it (the tree is killed).
#[napi]
pub fn acp_session_release(handle: u32) -> Result<()> {
    guard(|| {
        SESSIONS.remove(handle);
        crate::acp::ports::forget(handle);
        Ok(())
    })
}

/// Sessions not yet released (leak checks in tests).
#[napi]
pub fn live_acp_sessions() -> Result<u32> {
    guard(|| Ok(SESSIONS.len() as u32))
}

/// Creates a private (0700) `aml-acp-XXXXXX` directory under `parent`.
#[napi]
pub fn acp_state_directory_create(parent: String) -> Result<String> {
    guard(|| {
        let made = aml_acp::create_state_directory(parent.as_ref()).map_err(|error| {
            Error::from_reason(format!(
                "Could not create the ACP Agent state directory: {error}"
            ))
        })?;
        Ok(made.to_string_lossy().into_owned())
    })
}

/// Removes a state directory that never reached a session (a launch that failed first).
#[napi]
pub fn acp_state_directory_remove(directory: String) -> Result<()> {
    guard(|| match std::fs::remove_dir_all(&directory) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(Error::from_reason(format!(
            "ACP Agent state directory could not be removed: {error}"
        ))),
    })
}

#[derive(Deserialize)]
struct FileJson {
    path: String,
    content: String,
    #[serde(default)]
    executable: bool,
}

/// The launch file path rule for files written in a Sandbox guest: `"not-normalized"`,
/// `"outside"` or `null` (the guest words the TypeError for its own root).
#[napi]
pub fn acp_launch_path_problem(path: String) -> Result<Option<&'static str>> {
    guard(|| {
        Ok(aml_acp::path_problem(&path).map(|problem| match problem {
            aml_acp::PathProblem::NotNormalized => "not-normalized",
            aml_acp::PathProblem::Outside => "outside",
        }))
    })
}

/// Writes launch files (`[{ path, content, executable }]` JSON) into `state`. Returns the
/// TypeError text for a refused path (checked for every file before any is written), or
/// `null`; I/O failures throw.
#[napi]
pub fn acp_launch_files_write(state: String, files: String) -> Result<Option<String>> {
    guard(|| {
        let files: Vec<FileJson> = serde_json::from_str(&files).map_err(invalid)?;
        let files: Vec<LaunchFile> = files
            .into_iter()
            .map(|f| LaunchFile {
                path: f.path,
                content: f.content,
                executable: f.executable,
            })
            .collect();
        match aml_acp::write_launch_files(state.as_ref(), &files) {
            Ok(()) => Ok(None),
            Err(LaunchFileError::Path(message)) => Ok(Some(message.to_owned())),
            Err(LaunchFileError::Io(message)) => Err(Error::from_reason(message)),
        }
    })
}
