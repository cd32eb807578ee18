//! The actor behind one ACP [`Session`](crate::Session): the agent process and its connection,
//! the start-up requests, sequential turns racing the process's exit, and the close sequence
//! (session.rs spawns it and relays commands and events).

use aml_process::{ExitStatus, ProcessError};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, timeout, Instant};

use crate::config;
use crate::connection::{Connection, ConnectionLimits, Reply, OUTPUT_CLOSED};
use crate::error::{AcpError, ErrorKind};
use crate::events::{Event, ProcessFact};
use crate::session_config::{Limits, SessionSpec};
use crate::transport::{Child, Input, Output};

/// ACP `PROTOCOL_VERSION` of `@agentclientprotocol/sdk` 1.3.0.
pub const PROTOCOL_VERSION: u16 = 1;

const DURING_TURN: &str = "during a turn";
pub(crate) const DURING_START: &str = "before its ACP session was ready";

pub enum Command {
    Prompt(String),
    Cancel,
    Close,
}

pub(crate) struct Actor {
    pub(crate) process: Child,
    pub(crate) conn: Connection,
    pub(crate) events: mpsc::Sender<Event>,
    pub(crate) limits: Limits,
    pub(crate) execution_id: String,
    pub(crate) exit: Option<Result<ExitStatus, ProcessError>>,
    /// The exit fact of an exit seen during start-up: it is reported by `close()`, after the
    /// kill facts, so a session that could not be set up always reads spawn, start, kill,
    /// exit (the exit itself still explains the start-up failure).
    pub(crate) deferred_exit: Option<Event>,
    pub(crate) session_id: String,
}

pub(crate) fn actor(
    process: Child,
    (stdin, stdout, stderr): (Input, Output, Output),
    session: &SessionSpec,
    limits: Limits,
    events: &mpsc::Sender<Event>,
) -> Actor {
    let execution_id = process.id();
    let conn = Connection::start(
        stdin,
        stdout,
        stderr,
        events.clone(),
        session.permission_policy,
        session.detail.clone(),
        ConnectionLimits {
            line: limits.line,
            stderr_tail: limits.stderr_tail,
            text: limits.text,
        },
    );
    Actor {
        process,
        conn,
        events: events.clone(),
        limits,
        execution_id,
        exit: None,
        deferred_exit: None,
        session_id: String::new(),
    }
}

enum Step {
    Reply(Reply),
    Exit(Result<ExitStatus, ProcessError>),
    Command(Option<Command>),
    Deadline,
}

impl Actor {
    pub(crate) async fn emit(&self, event: Event) {
        let _ = self.events.send(event).await;
    }

    fn fact(&self, state: &'static str, exit_code: Option<i32>) -> Event {
        Event::Process(ProcessFact {
            state,
            execution_id: Some(self.execution_id.clone()),
            exit_code,
            command: None,
        })
    }

    pub(crate) async fn open(&mut self, spec: &SessionSpec) -> Result<(), AcpError> {
        let init = self
            .call(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": {},
                    "clientInfo": { "name": "aml", "title": "Agent Markup Language", "version": "0.0.0" },
                }),
            )
            .await?;
        if !init.is_object() {
            return Err(AcpError::invalid_reply("initialize"));
        }
        check_mcp_capabilities(&init, &spec.mcp_servers)?;
        if let Some(method) = &spec.authentication_method_id {
            self.call("authenticate", json!({ "methodId": method }))
                .await?;
        }
        let created = self
            .call(
                "session/new",
                json!({ "cwd": spec.cwd, "mcpServers": spec.mcp_servers }),
            )
            .await?;
        let Some(session_id) = created.get("sessionId").and_then(Value::as_str) else {
            return Err(AcpError::invalid_reply("session/new"));
        };
        self.session_id = session_id.to_owned();
        let mut options = config::advertised(&created);
        for entry in &spec.configuration {
            let params = config::request_params(&self.session_id, &options, entry)?;
            let reply = self.call("session/set_config_option", params).await?;
            if reply.get("configOptions").is_some() {
                options = config::advertised(&reply);
            }
        }
        Ok(())
    }

    /// One request during start-up, racing the process's exit and its deadline.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, AcpError> {
        let mut rx = self.conn.request(method, &params).await;
        let deadline = Instant::now() + self.limits.startup_request;
        let reply = loop {
            let step = tokio::select! {
                biased;
                reply = &mut rx => Step::Reply(reply.unwrap_or_else(|_| Err(dropped()))),
                status = self.process.wait(), if self.exit.is_none() => Step::Exit(status),
                () = sleep_until(deadline) => Step::Deadline,
            };
            match step {
                Step::Reply(reply) => break self.settle(reply, &mut rx, DURING_START).await,
                Step::Exit(status) => break self.after_exit(status, &mut rx, DURING_START).await,
                Step::Deadline => {
                    break Err(AcpError::unanswered(method, self.limits.startup_request))
                }
                Step::Command(_) => continue,
            }
        }?;
        serde_json::from_str(reply.get()).map_err(|_| AcpError::invalid_reply(method))
    }

    pub(crate) async fn serve(&mut self, commands: &mut mpsc::UnboundedReceiver<Command>) {
        loop {
            match commands.recv().await {
                None | Some(Command::Close) => return,
                Some(Command::Cancel) => self.cancel().await,
                Some(Command::Prompt(text)) => {
                    if self.turn(text, commands).await {
                        return;
                    }
                }
            }
        }
    }

    async fn cancel(&self) {
        self.conn.shared.set_cancelling();
        let params = json!({ "sessionId": self.session_id });
        self.conn.notify("session/cancel", &params).await;
    }

    /// One `session/prompt`; returns whether the session was closed meanwhile.
    async fn turn(
        &mut self,
        text: String,
        commands: &mut mpsc::UnboundedReceiver<Command>,
    ) -> bool {
        let _ = self.conn.shared.take_text();
        self.conn.shared.clear_cancelling();
        let params = json!({
            "sessionId": self.session_id,
            "prompt": [{ "type": "text", "text": text }],
        });
        let mut rx = self.conn.request("session/prompt", &params).await;
        let mut deadline: Option<Instant> = None;
        let mut closing = false;
        let outcome = loop {
            let step = tokio::select! {
                biased;
                reply = &mut rx => Step::Reply(reply.unwrap_or_else(|_| Err(dropped()))),
                status = self.process.wait(), if self.exit.is_none() => Step::Exit(status),
                command = commands.recv() => Step::Command(command),
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => Step::Deadline,
            };
            match step {
                Step::Reply(reply) => break self.settle(reply, &mut rx, DURING_TURN).await,
                Step::Exit(status) => break self.after_exit(status, &mut rx, DURING_TURN).await,
                Step::Command(Some(Command::Cancel)) => {
                    self.cancel().await;
                    deadline.get_or_insert(Instant::now() + self.limits.cancel_grace);
                }
                // A second prompt while one runs is a caller bug; the turn goes on.
                Step::Command(Some(Command::Prompt(_))) => {}
                Step::Command(None | Some(Command::Close)) => {
                    closing = true;
                    break Err(AcpError::new(
                        ErrorKind::Cancelled,
                        "ACP session was closed during a turn",
                    ));
                }
                Step::Deadline => {
                    break Err(AcpError::new(
                        ErrorKind::Cancelled,
                        format!(
                            "ACP Agent did not end its turn within {} ms of session/cancel",
                            self.limits.cancel_grace.as_millis()
                        ),
                    ))
                }
            }
        };
        let event = match outcome.and_then(|raw| self.completed(&raw)) {
            Ok(event) => event,
            Err(error) => Event::Failed(error),
        };
        self.emit(event).await;
        closing
    }

    fn completed(&self, raw: &RawValue) -> Result<Event, AcpError> {
        let reply: Value = serde_json::from_str(raw.get())
            .map_err(|_| AcpError::invalid_reply("session/prompt"))?;
        let Some(stop_reason) = reply.get("stopReason").and_then(Value::as_str) else {
            return Err(AcpError::invalid_reply("session/prompt"));
        };
        let usage = reply
            .get("usage")
            .filter(|usage| !usage.is_null())
            .map(Value::to_string);
        Ok(Event::Completed {
            stop_reason: stop_reason.to_owned(),
            usage,
            text: self.conn.shared.take_text()?,
        })
    }

    /// A reply arrived. When it is "the agent closed its output", the process is probably
    /// exiting: report its exit (with the stderr tail) instead, if it comes soon.
    async fn settle(
        &mut self,
        reply: Reply,
        rx: &mut oneshot::Receiver<Reply>,
        phase: &str,
    ) -> Reply {
        match reply {
            Err(error) if error.message == OUTPUT_CLOSED && self.exit.is_none() => {
                match timeout(self.limits.exit_drain, self.process.wait()).await {
                    Ok(status) => self.after_exit(status, rx, phase).await,
                    Err(_) => Err(error),
                }
            }
            Err(error) if error.message == OUTPUT_CLOSED => {
                let status = self
                    .exit
                    .clone()
                    .unwrap_or(Err(ProcessError::SupervisorStopped));
                self.after_exit(status, rx, phase).await
            }
            reply => reply,
        }
    }

    /// The process exited while `rx` was pending: read what it wrote before exiting, then
    /// either use the reply that was already on its way or report the exit.
    async fn after_exit(
        &mut self,
        status: Result<ExitStatus, ProcessError>,
        rx: &mut oneshot::Receiver<Reply>,
        phase: &str,
    ) -> Reply {
        if self.exit.is_none() {
            self.exit = Some(status.clone());
            let fact = match &status {
                Ok(ExitStatus::Exited(code)) => self.fact("exited", Some(*code)),
                Ok(ExitStatus::Signaled(_)) => self.fact("exited", None),
                Err(_) => self.fact("wait_failed", None),
            };
            if phase == DURING_START {
                self.deferred_exit = Some(fact);
            } else {
                self.emit(fact).await;
            }
        }
        // An exited process's output ends soon: read it first. A process that could not be
        // observed may still be running, and its output would only end with the kill.
        if status.is_ok() {
            let drain = self.limits.exit_drain;
            let _ = timeout(drain, self.conn.reader_done.cancelled()).await;
            let _ = timeout(drain, self.conn.stderr_done.cancelled()).await;
        }
        if let Ok(Ok(reply)) = rx.try_recv() {
            return Ok(reply);
        }
        let tail = self.conn.shared.stderr_tail();
        Err(match status {
            Ok(status) => AcpError::exited(status, phase, &tail),
            Err(error) => AcpError::new(
                ErrorKind::Wait,
                format!("ACP Agent process could not be observed: {error}"),
            ),
        })
    }

    /// Ordered cleanup: close the connection, kill the tree, observe its exit.
    pub(crate) async fn close(mut self) -> Vec<String> {
        let mut errors = Vec::new();
        self.conn.close();
        self.emit(self.fact("kill_requested", None)).await;
        self.process.kill(self.limits.kill_grace).await;
        self.emit(self.fact("kill_completed", None)).await;
        if let Some(fact) = self.deferred_exit.take() {
            self.emit(fact).await;
        }
        if self.exit.is_none() {
            match self.process.wait().await {
                Ok(ExitStatus::Exited(code)) => self.emit(self.fact("exited", Some(code))).await,
                // Killed by our own request: termination, not an exit code.
                Ok(ExitStatus::Signaled(_)) => {}
                Err(error) => errors.push(format!("ACP Agent process wait failed: {error}")),
            }
        }
        let drain = self.limits.exit_drain;
        let _ = timeout(drain, self.conn.reader_done.cancelled()).await;
        let _ = timeout(drain, self.conn.stderr_done.cancelled()).await;
        self.conn.abandon();
        errors
    }
}

fn dropped() -> AcpError {
    AcpError::protocol("ACP connection stopped before the reply arrived")
}

/// BA-0: an HTTP or SSE server needs the agent's `mcpCapabilities` to say so.
fn check_mcp_capabilities(init: &Value, servers: &[Value]) -> Result<(), AcpError> {
    let capabilities = init.pointer("/agentCapabilities/mcpCapabilities");
    for server in servers {
        let (flag, label) = match server.get("type").and_then(Value::as_str) {
            Some("http") => ("http", "HTTP"),
            Some("sse") => ("sse", "SSE"),
            _ => continue,
        };
        let advertised = capabilities
            .and_then(|c| c.get(flag))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !advertised {
            let name = server
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(AcpError::new(
                ErrorKind::Capability,
                format!("ACP Agent does not advertise {label} MCP support required by server \"{name}\""),
            ));
        }
    }
    Ok(())
}
