//! Misbehaving agents: crashes, floods, malformed frames, cancellation honoured and ignored.
//! Nothing may panic, hang or leave a process behind.

mod common;

use std::time::Duration;

use aml_acp::{ErrorKind, Event, Launch};
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_turn_reports_the_exit_code_and_stderr_tail() {
    let (session, opened) = open(config(&[])).await;
    let pid = leader_pid(&opened);
    let events = turn(&session, "crash").await;
    let error = failure(&events);
    assert_eq!(error.kind, ErrorKind::Exited);
    assert_eq!(
        error.message,
        "ACP Agent process exited with code 3 during a turn: about to fail\nfatal: the model went away"
    );
    assert_eq!(states(&events), ["exited"]);
    match events.iter().find(|e| matches!(e, Event::Process(_))) {
        Some(Event::Process(fact)) => assert_eq!(fact.exit_code, Some(3)),
        other => panic!("{other:?}"),
    }
    // The turn after a crash fails at once, and cleanup reports no second exit.
    let again = turn(&session, "hello").await;
    assert!(failure(&again)
        .message
        .starts_with("ACP Agent process exited with code 3 during a turn"));
    let closed = close(&session).await;
    assert_eq!(states(&closed), ["kill_requested", "kill_completed"]);
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_during_start_up_names_the_phase() {
    let (session, opened) = open(config(&[("FAKE_INIT_EXIT", "1")])).await;
    assert_eq!(
        failure(&opened).message,
        "ACP Agent process exited with code 7 before its ACP session was ready: cannot start: missing credentials"
    );
    // The exit explains the failure, but its fact follows the cleanup's kill facts.
    assert_eq!(states(&opened), ["spawn_requested", "started"]);
    let closed = close(&session).await;
    assert_eq!(
        states(&closed),
        ["kill_requested", "kill_completed", "exited"]
    );
    match closed.iter().rev().find(|e| matches!(e, Event::Process(_))) {
        Some(Event::Process(fact)) => assert_eq!(fact.exit_code, Some(7)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_written_just_before_exit_is_still_used() {
    let (session, _) = open(config(&[])).await;
    assert_eq!(text(&turn(&session, "exit-after-reply").await), "bye");
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honoured_cancel_ends_the_turn_with_the_agents_stop_reason() {
    let (session, _) = open(config(&[])).await;
    session.prompt("honour-cancel".into());
    until(&session, |e| matches!(e, Event::Update { .. })).await;
    session.cancel();
    let events = until(&session, is_terminal).await;
    match events.last() {
        Some(Event::Completed {
            stop_reason, text, ..
        }) => {
            assert_eq!(
                (stop_reason.as_str(), text.as_str()),
                ("cancelled", "working")
            )
        }
        other => panic!("{other:?}"),
    }
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignored_cancel_gives_up_the_turn_and_the_tree_is_killed() {
    let (session, opened) = open(config(&[])).await;
    let leader = leader_pid(&opened);
    session.prompt("ignore-cancel".into());
    let started = until(&session, |e| matches!(e, Event::Update { .. })).await;
    let child: u32 = match started.last() {
        Some(Event::Update { update, .. }) => {
            let update: serde_json::Value = serde_json::from_str(update.as_ref().unwrap()).unwrap();
            update["content"]["text"].as_str().unwrap().parse().unwrap()
        }
        other => panic!("{other:?}"),
    };
    assert!(alive(child));
    session.cancel();
    let error = failure(&until(&session, is_terminal).await);
    assert_eq!(error.kind, ErrorKind::Cancelled);
    assert_eq!(
        error.message,
        "ACP Agent did not end its turn within 300 ms of session/cancel"
    );
    // The leader ignores SIGTERM: only the SIGKILL after the grace period ends it.
    let closed = close(&session).await;
    assert_eq!(states(&closed), ["kill_requested", "kill_completed"]);
    assert!(!alive(leader), "leader {leader} survived");
    assert!(!alive(child), "grandchild {child} survived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_handle_mid_turn_kills_the_tree() {
    let (session, opened) = open(config(&[])).await;
    let leader = leader_pid(&opened);
    session.prompt("ignore-cancel".into());
    until(&session, |e| matches!(e, Event::Update { .. })).await;
    drop(session);
    let gone = async {
        while alive(leader) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), gone)
        .await
        .expect("leader survived the drop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_before_the_session_is_ready_kills_the_agent() {
    let mut silent = config(&[]);
    silent.launch = Launch {
        command: "sleep".into(),
        args: vec!["1000".into()],
        inherit_env: true,
        cwd: std::env::temp_dir(),
        ..Launch::default()
    };
    let session = Agent::start(silent);
    let started = until(
        &session,
        |e| matches!(e, Event::Process(f) if f.state == "started"),
    )
    .await;
    let pid = leader_pid(&started);
    session.close();
    let events = until(&session, is_closed).await;
    match &events[0] {
        Event::Failed(error) => {
            assert_eq!(error.message, "ACP session was closed before it was ready")
        }
        other => panic!("{other:?}"),
    }
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_flood_keeps_only_the_tail() {
    let (session, _) = open(config(&[])).await;
    assert_eq!(text(&turn(&session, "flood-stderr:32").await), "");
    let error = failure(&turn(&session, "crash").await);
    let tail = error.message.split_once(": ").unwrap().1;
    assert!(tail.len() <= 16 * 1024, "{} bytes", tail.len());
    let (start, end) = (&tail[..10], &tail[tail.len() - 40..]);
    assert!(
        tail.starts_with('e') && tail.contains("TAIL-END") && tail.ends_with("went away"),
        "{start}…{end}"
    );
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_flood_streams_in_order() {
    let mut config = config(&[]);
    config.limits.events = 16;
    let (session, _) = open(config).await;
    let events = turn(&session, "flood-updates:10000").await;
    let updates = events
        .iter()
        .filter(|e| matches!(e, Event::Update { .. }))
        .count();
    assert_eq!(updates, 10_000);
    assert_eq!(text(&events), "x".repeat(10_000));
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_are_ignored() {
    let (session, _) = open(config(&[])).await;
    let events = turn(&session, "malformed").await;
    assert_eq!(text(&events), "survived");
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Update { session_update, .. } => Some(session_update.as_str()),
            _ => None,
        })
        .collect();
    // The chunk whose content is not a text block is still an update, without text.
    assert_eq!(kinds, ["agent_message_chunk", "agent_message_chunk"]);
    assert_eq!(
        text(&turn(&session, "still-there").await),
        "echo:still-there"
    );
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_limit_fails_the_turn() {
    let (session, opened) = open(config(&[])).await;
    let pid = leader_pid(&opened);
    let error = failure(&turn(&session, "huge-line").await);
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert_eq!(
        error.message,
        "ACP Agent sent a message line longer than 8388608 bytes"
    );
    let again = failure(&turn(&session, "hello").await);
    assert_eq!(again.message, error.message);
    close(&session).await;
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_of_the_wrong_shape_and_agent_errors() {
    let (session, _) = open(config(&[])).await;
    let error = failure(&turn(&session, "bad-reply").await);
    assert_eq!(
        (error.kind, error.message.as_str()),
        (
            ErrorKind::Protocol,
            "ACP Agent returned an invalid session/prompt response"
        )
    );
    let error = failure(&turn(&session, "rpc-error").await);
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::Agent, "model quota exhausted")
    );
    assert_eq!(text(&turn(&session, "ok").await), "echo:ok");
    close(&session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_text_is_bounded() {
    let mut config = config(&[]);
    config.limits.text = 100;
    let (session, _) = open(config).await;
    let error = failure(&turn(&session, "flood-updates:101").await);
    assert_eq!(error.message, "ACP Agent response text exceeded 100 bytes");
    assert_eq!(text(&turn(&session, "again").await), "echo:again");
    close(&session).await;
}
