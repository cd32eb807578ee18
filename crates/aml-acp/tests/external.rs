//! Sessions over an external process (the Sandbox launch path): the test plays the Sandbox
//! supervisor, spawning the fake agent with `aml-process` and pumping its pipes, exit and
//! kill through an `ExternalPort`, as the binding's JS pump does for `SandboxRuntime.spawn()`.

mod common;

use std::sync::Arc;

use aml_acp::{external, Event, ExternalExit, ExternalPort, Pipe, Session};
use aml_process::{ExitStatus, SpawnOptions};
use common::*;

/// Spawns the fake agent and pumps it into `port`; returns the child's pid.
async fn supervise(port: Arc<ExternalPort>) -> (String, u32) {
    let options = SpawnOptions {
        cwd: Some(std::env::temp_dir()),
        inherit_env: true,
        ..SpawnOptions::default()
    };
    let mut child = aml_process::spawn("node", &[fixture()], options)
        .await
        .unwrap();
    let id = child.id();
    let pid = child.pid();
    let mut stdout = child.take_stdout().unwrap();
    let mut stderr = child.take_stderr().unwrap();
    let mut stdin = child.take_stdin().unwrap();
    let out = Arc::clone(&port);
    tokio::spawn(async move {
        while let Ok(Some(chunk)) = stdout.read_chunk().await {
            if !out.feed(Pipe::Stdout, chunk).await {
                break;
            }
        }
        out.end(Pipe::Stdout);
    });
    let err = Arc::clone(&port);
    tokio::spawn(async move {
        while let Ok(Some(chunk)) = stderr.read_chunk().await {
            if !err.feed(Pipe::Stderr, chunk).await {
                break;
            }
        }
        err.end(Pipe::Stderr);
    });
    let input = Arc::clone(&port);
    tokio::spawn(async move {
        while let Some(bytes) = input.next_input().await {
            if stdin.write_all(&bytes).await.is_err() {
                break;
            }
        }
        stdin.close();
    });
    let child = Arc::new(child);
    let waiter = Arc::clone(&child);
    let exits = Arc::clone(&port);
    tokio::spawn(async move {
        let exit = match waiter.wait().await {
            Ok(ExitStatus::Exited(code)) => ExternalExit::Exited(code),
            Ok(ExitStatus::Signaled(signal)) => ExternalExit::Signaled(signal),
            Err(error) => ExternalExit::Failed(error.to_string()),
        };
        exits.exited(exit);
    });
    tokio::spawn(async move {
        port.kill_requested().await;
        child.kill().await;
        port.killed();
    });
    (id, pid)
}

async fn start() -> (Agent, u32, String) {
    let (agent, port) = external("sandbox-test:1".into());
    let (_, pid) = supervise(port).await;
    let session = Agent::from(Session::start_external(config(&[]), agent));
    (session, pid, "sandbox-test:1".into())
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence; pid is a plain integer.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_process_serves_turns_and_is_killed_through_its_supervisor() {
    let (session, pid, id) = start().await;
    let opened = until(&session, is_terminal).await;
    assert!(
        matches!(opened.last(), Some(Event::Created { .. })),
        "{opened:?}"
    );
    // The launcher reported the spawn: the session itself reports no spawn facts.
    assert!(states(&opened).is_empty(), "{opened:?}");
    assert_eq!(text(&turn(&session, "hello").await), "Hello");
    let closed = close(&session).await;
    // close() ends the agent's stdin before it asks for the kill, and the fixture exits by
    // itself on end of input: when that exit (code 0) is observed before the kill lands, the
    // session truthfully reports it after the kill facts. Either way the kill facts come first.
    let states = states(&closed);
    assert!(
        states == ["kill_requested", "kill_completed"]
            || states == ["kill_requested", "kill_completed", "exited"],
        "{closed:?}"
    );
    let killed = closed.iter().find_map(|event| match event {
        Event::Process(fact) if fact.state == "kill_requested" => fact.execution_id.clone(),
        _ => None,
    });
    assert_eq!(killed.as_deref(), Some(id.as_str()));
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_exit_during_a_turn_carries_the_stderr_tail() {
    let (session, _pid, _) = start().await;
    until(&session, is_terminal).await;
    let error = failure(&turn(&session, "crash").await);
    assert_eq!(
        error.message,
        "ACP Agent process exited with code 3 during a turn: about to fail\nfatal: the model went away"
    );
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_wait_during_a_turn_is_a_wait_failure_not_an_exit() {
    let (agent, port) = external("sandbox-test:2".into());
    let (_, pid) = supervise(Arc::clone(&port)).await;
    let session = Agent::from(Session::start_external(config(&[]), agent));
    until(&session, is_terminal).await;
    session.prompt("honour-cancel".into());
    until(&session, |e| matches!(e, Event::Update { .. })).await;
    // The supervisor cannot observe the process any more (a remote wait() rejected).
    port.exited(ExternalExit::Failed("remote wait failed".into()));
    let events = until(&session, is_terminal).await;
    let error = failure(&events);
    assert_eq!(error.kind, aml_acp::ErrorKind::Wait);
    assert_eq!(
        error.message,
        "ACP Agent process could not be observed: Sandbox process wait failed: remote wait failed"
    );
    assert_eq!(states(&events), ["wait_failed"]);
    // Nothing claims an exit afterwards: cleanup only kills.
    let closed = close(&session).await;
    assert_eq!(states(&closed), ["kill_requested", "kill_completed"]);
    assert!(!alive(pid));
}
