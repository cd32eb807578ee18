//! One ACP session as an actor: a tokio task that owns the agent process and the connection,
//! takes commands (prompt, cancel, close) and reports everything as [`Event`]s in order.
//!
//! Flow (INVENTORY BA-0): spawn → `initialize` (+ the MCP capability checks) → optional
//! `authenticate` → `session/new` → `session/set_config_option` per entry → `Created`; then
//! sequential `session/prompt` turns, each racing the process's exit; on close: stdin EOF,
//! tree kill (SIGTERM, grace, SIGKILL, reaped), exit facts, state-directory removal,
//! `Closed`. Every request races the process's exit, so a dead agent never hangs a caller.

use std::time::Duration;

use aml_process::SpawnOptions;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::error::{AcpError, ErrorKind};
use crate::events::{Detail, Event, ProcessFact, UpdateDetail};
use crate::launch::{spawn_error, Launch};
use crate::transport::{Child, ExternalAgent, Input, Output};

use crate::session_actor::{actor, Actor};
pub use crate::session_actor::{Command, PROTOCOL_VERSION};
pub use crate::session_config::{Limits, SessionConfig, SessionSpec};

/// How long `Session::next` gathers streamed events after the first.
const COALESCE: Duration = Duration::from_millis(2);

fn is_streamed(event: &Event) -> bool {
    matches!(event, Event::Update { .. } | Event::Process(_))
}
/// The caller's handle. Dropping it closes the session (the actor kills the tree).
pub struct Session {
    commands: mpsc::UnboundedSender<Command>,
    events: tokio::sync::Mutex<mpsc::Receiver<Event>>,
    detail: UpdateDetail,
}

impl Session {
    /// Starts the actor; must be called inside a tokio runtime.
    pub fn start(config: SessionConfig) -> Session {
        Session::start_with(config, None)
    }

    /// Starts the actor over a process someone else started and supervises (a Sandbox's
    /// `spawn()`); `config.launch` is only used for its command line. Must be called inside
    /// a tokio runtime.
    pub fn start_external(config: SessionConfig, agent: ExternalAgent) -> Session {
        Session::start_with(config, Some(agent))
    }

    fn start_with(config: SessionConfig, external: Option<ExternalAgent>) -> Session {
        let (commands, inbox) = mpsc::unbounded_channel();
        let (events, outbox) = mpsc::channel(config.limits.events.max(1));
        let detail = config.session.detail.clone();
        tokio::spawn(run(config, external, inbox, events));
        Session {
            commands,
            events: tokio::sync::Mutex::new(outbox),
            detail,
        }
    }

    /// Starts a turn; its outcome arrives as `Completed` or `Failed`.
    pub fn prompt(&self, text: String) {
        let _ = self.commands.send(Command::Prompt(text));
    }

    /// Sends `session/cancel` (the current turn gets `cancel_grace` to end).
    pub fn cancel(&self) {
        let _ = self.commands.send(Command::Cancel);
    }

    /// How much of each later update to report.
    pub fn set_detail(&self, detail: Detail) {
        self.detail.set(detail);
    }

    /// Ends the session; `Closed` is the last event.
    pub fn close(&self) {
        let _ = self.commands.send(Command::Close);
    }

    /// The events available now (at most `max`), waiting for at least one; empty once the
    /// session has ended and everything was read.
    ///
    /// Streamed facts (updates, process states) are coalesced for up to `COALESCE` after the
    /// first one, so an agent that writes one update at a time still costs the observer one
    /// wake-up per batch rather than per update; an outcome event returns at once.
    pub async fn next(&self, max: usize) -> Vec<Event> {
        let max = max.max(1);
        let mut events = self.events.lock().await;
        let mut out = Vec::new();
        if events.recv_many(&mut out, max).await == 0 {
            return out;
        }
        let deadline = Instant::now() + COALESCE;
        while out.len() < max && out.last().is_some_and(is_streamed) {
            let room = max - out.len();
            match tokio::time::timeout_at(deadline, events.recv_many(&mut out, room)).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        out
    }
}

async fn run(
    config: SessionConfig,
    external: Option<ExternalAgent>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::Sender<Event>,
) {
    let SessionConfig {
        launch,
        session,
        limits,
        state_directory,
    } = config;
    let mut session_errors = Vec::new();
    let started = match external {
        Some(agent) => Ok(attach(agent, &session, limits, &events)),
        None => spawn(&launch, &session, limits, &events).await,
    };
    match started {
        Err(error) => {
            let _ = events.send(Event::Failed(error)).await;
        }
        Ok(mut actor) => {
            let opened = tokio::select! {
                opened = actor.open(&session) => opened,
                () = closed(&mut commands) => Err(AcpError::new(
                    ErrorKind::Cancelled,
                    "ACP session was closed before it was ready",
                )),
            };
            match opened {
                Ok(()) => {
                    let session_id = actor.session_id.clone();
                    actor.emit(Event::Created { session_id }).await;
                    actor.serve(&mut commands).await;
                }
                Err(error) => actor.emit(Event::Failed(error)).await,
            }
            session_errors = actor.close().await;
        }
    }
    let mut resource_errors = Vec::new();
    if let Some(directory) = state_directory {
        let removed = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(directory)).await;
        match removed {
            Ok(Ok(())) => {}
            Ok(Err(error)) if error.kind() == std::io::ErrorKind::NotFound => {}
            Ok(Err(error)) => resource_errors.push(format!(
                "ACP Agent state directory could not be removed: {error}"
            )),
            Err(error) => resource_errors.push(format!(
                "ACP Agent state directory could not be removed: {error}"
            )),
        }
    }
    let _ = events
        .send(Event::Closed {
            session_errors,
            resource_errors,
        })
        .await;
}

/// Resolves on `Close` or when the handle is dropped; other commands wait for the session.
async fn closed(commands: &mut mpsc::UnboundedReceiver<Command>) {
    while let Some(command) = commands.recv().await {
        if matches!(command, Command::Close) {
            return;
        }
    }
}

async fn spawn(
    launch: &Launch,
    session: &SessionSpec,
    limits: Limits,
    events: &mpsc::Sender<Event>,
) -> Result<Actor, AcpError> {
    let command_line = launch.command_line();
    let fact = |state, execution_id| ProcessFact {
        state,
        execution_id,
        exit_code: None,
        command: Some(command_line.clone()),
    };
    let _ = events
        .send(Event::Process(fact("spawn_requested", None)))
        .await;
    let options = SpawnOptions {
        cwd: Some(launch.cwd.clone()),
        env: launch.env.clone(),
        inherit_env: launch.inherit_env,
        grace: limits.kill_grace,
        ..SpawnOptions::default()
    };
    let mut process = aml_process::spawn(&launch.command, &launch.args, options)
        .await
        .map_err(|error| spawn_error(&launch.command, &error))?;
    let execution_id = process.id();
    let _ = events
        .send(Event::Process(fact("started", Some(execution_id.clone()))))
        .await;
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        process.take_stdin(),
        process.take_stdout(),
        process.take_stderr(),
    ) else {
        unreachable!("a fresh process handle has all three pipes");
    };
    let pipes = (
        Input::Local(stdin),
        Output::Local(stdout),
        Output::Local(stderr),
    );
    Ok(actor(Child::Local(process), pipes, session, limits, events))
}

/// An external process is already running; its spawn facts were reported by its launcher.
fn attach(
    agent: ExternalAgent,
    session: &SessionSpec,
    limits: Limits,
    events: &mpsc::Sender<Event>,
) -> Actor {
    let (child, stdin, stdout, stderr) = agent.split();
    actor(
        Child::External(child),
        (stdin, stdout, stderr),
        session,
        limits,
        events,
    )
}
