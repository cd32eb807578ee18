//! Shared helpers: sessions against tests/fixtures/fake-agent.cjs (run with `node`).
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use std::collections::VecDeque;
use std::sync::Mutex;

use aml_acp::{Event, Launch, Limits, Session, SessionConfig, SessionSpec};

/// A session plus the events read past the last `until` stop, so no event is lost.
pub struct Agent {
    session: Session,
    backlog: Mutex<VecDeque<Event>>,
}

impl Agent {
    pub fn start(config: SessionConfig) -> Agent {
        Agent {
            session: Session::start(config),
            backlog: Mutex::default(),
        }
    }
}

impl From<Session> for Agent {
    fn from(session: Session) -> Agent {
        Agent {
            session,
            backlog: Mutex::default(),
        }
    }
}

impl std::ops::Deref for Agent {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

pub fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake-agent.cjs")
        .to_string_lossy()
        .into_owned()
}

pub fn config(env: &[(&str, &str)]) -> SessionConfig {
    SessionConfig {
        launch: Launch {
            command: "node".into(),
            args: vec![fixture()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            inherit_env: true,
            cwd: std::env::temp_dir(),
        },
        session: SessionSpec {
            cwd: "/workspace".into(),
            ..SessionSpec::default()
        },
        limits: Limits {
            cancel_grace: Duration::from_millis(300),
            kill_grace: Duration::from_millis(300),
            ..Limits::default()
        },
        state_directory: None,
    }
}

/// Hang guard only: generous, never a timing assertion.
const GUARD: Duration = Duration::from_secs(60);

/// Reads events until one satisfies `stop` (inclusive).
pub async fn until(agent: &Agent, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
    let collect = async {
        let mut seen = Vec::new();
        loop {
            let backlog: Vec<Event> = agent.backlog.lock().unwrap().drain(..).collect();
            let batch = if backlog.is_empty() {
                agent.session.next(256).await
            } else {
                backlog
            };
            assert!(!batch.is_empty(), "session ended early: {seen:?}");
            let mut batch = batch.into_iter();
            while let Some(event) = batch.next() {
                let done = stop(&event);
                seen.push(event);
                if done {
                    agent.backlog.lock().unwrap().extend(batch);
                    return seen;
                }
            }
        }
    };
    tokio::time::timeout(GUARD, collect)
        .await
        .expect("hang guard")
}

pub fn is_terminal(event: &Event) -> bool {
    matches!(
        event,
        Event::Created { .. } | Event::Completed { .. } | Event::Failed(_)
    )
}

pub fn is_closed(event: &Event) -> bool {
    matches!(event, Event::Closed { .. })
}

pub async fn open(config: SessionConfig) -> (Agent, Vec<Event>) {
    let session = Agent::start(config);
    let events = until(&session, is_terminal).await;
    (session, events)
}

pub async fn turn(session: &Agent, text: &str) -> Vec<Event> {
    session.prompt(text.into());
    until(session, is_terminal).await
}

pub async fn close(session: &Agent) -> Vec<Event> {
    session.close();
    until(session, is_closed).await
}

/// The `Completed` text of a turn's events; panics on failure.
pub fn text(events: &[Event]) -> String {
    match events.last() {
        Some(Event::Completed { text, .. }) => text.clone(),
        other => panic!("turn did not complete: {other:?}"),
    }
}

pub fn failure(events: &[Event]) -> aml_acp::AcpError {
    match events.last() {
        Some(Event::Failed(error)) => error.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub fn states(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Process(fact) => Some(fact.state),
            _ => None,
        })
        .collect()
}

pub fn leader_pid(events: &[Event]) -> u32 {
    events
        .iter()
        .find_map(|event| match event {
            Event::Process(fact) if fact.state == "started" => fact
                .execution_id
                .as_ref()?
                .strip_prefix("local-process:")?
                .parse()
                .ok(),
            _ => None,
        })
        .expect("a started fact")
}

/// Whether `pid` is alive (a zombie counts as gone: nothing runs, and it is not ours to reap).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
