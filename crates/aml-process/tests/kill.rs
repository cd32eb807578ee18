//! Kill semantics: idempotence, memoised wait, the grace period, cancellation.

mod common;

use std::time::{Duration, Instant};

use aml_process::{spawn, ExitStatus, ProcessError, SpawnOptions};
use common::{assert_all_gone, read_pids, sh};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn kill_is_idempotent_and_wait_is_memoised() {
    let (command, argv) = sh("sleep 1000 & echo $!; wait");
    let mut process = spawn(command, &argv, SpawnOptions::default())
        .await
        .unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
    tokio::join!(process.kill(), process.kill());
    process.kill().await;
    let first = process.wait().await;
    let second = process.wait().await;
    assert_eq!(first.unwrap(), ExitStatus::Signaled(libc::SIGTERM));
    assert_eq!(second.unwrap(), ExitStatus::Signaled(libc::SIGTERM));
    assert_all_gone(&[process.pid(), pids[0]], Duration::ZERO);
    // Still a no-op (and never signals a possibly recycled group) long after the fact.
    process.kill().await;
}

#[tokio::test]
async fn wait_after_a_normal_exit_is_memoised_and_kill_still_reaps() {
    let (command, argv) = sh("exit 4");
    let process = spawn(command, &argv, SpawnOptions::default())
        .await
        .unwrap();
    assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(4));
    // The leader's zombie pins the group until teardown.
    assert!(aml_process::process_exists(process.pid()));
    process.kill().await;
    assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(4));
    assert_all_gone(&[process.pid()], Duration::ZERO);
}

#[tokio::test]
async fn a_tree_ignoring_sigterm_is_killed_after_the_grace_period() {
    let grace = Duration::from_millis(300);
    let options = SpawnOptions {
        grace,
        ..SpawnOptions::default()
    };
    // An ignored signal stays ignored across fork and exec, so the sleep ignores it too.
    let (command, argv) = sh(r#"trap "" TERM; sleep 1000 & echo $!; wait"#);
    let mut process = spawn(command, &argv, options).await.unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
    let started = Instant::now();
    process.kill().await;
    let took = started.elapsed();
    assert!(
        took >= grace,
        "SIGKILL came before the grace period ended: {took:?}"
    );
    assert!(took < grace + Duration::from_secs(1), "took {took:?}");
    assert_eq!(
        process.wait().await.unwrap(),
        ExitStatus::Signaled(libc::SIGKILL)
    );
    assert_all_gone(&[process.pid(), pids[0]], Duration::ZERO);
}

#[tokio::test]
async fn a_tree_exiting_on_sigterm_does_not_wait_out_the_grace_period() {
    let options = SpawnOptions {
        grace: Duration::from_secs(30),
        ..SpawnOptions::default()
    };
    let (command, argv) =
        sh(r#"trap 'echo bye; exit 3' TERM; echo $$; while :; do sleep 0.05; done"#);
    let mut process = spawn(command, &argv, options).await.unwrap();
    let mut stdout = process.take_stdout().unwrap();
    read_pids(&mut stdout, 1).await;
    let started = Instant::now();
    process.kill().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(3));
    assert_eq!(stdout.read_chunk().await.unwrap().unwrap(), b"bye\n");
}

#[tokio::test]
async fn zero_grace_kills_at_once() {
    let options = SpawnOptions {
        grace: Duration::ZERO,
        ..SpawnOptions::default()
    };
    let (command, argv) = sh(r#"trap 'exit 3' TERM; echo $$; sleep 1000"#);
    let mut process = spawn(command, &argv, options).await.unwrap();
    read_pids(&mut process.take_stdout().unwrap(), 1).await;
    process.kill().await;
    assert_eq!(
        process.wait().await.unwrap(),
        ExitStatus::Signaled(libc::SIGKILL)
    );
}

#[tokio::test]
async fn cancellation_kills_the_tree() {
    let token = CancellationToken::new();
    let options = SpawnOptions {
        cancel: Some(token.clone()),
        ..SpawnOptions::default()
    };
    let (command, argv) = sh("sleep 1000 & echo $!; wait");
    let mut process = spawn(command, &argv, options).await.unwrap();
    let pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
    token.cancel();
    assert!(matches!(process.wait().await, Err(ProcessError::Cancelled)));
    process.kill().await;
    assert!(matches!(process.wait().await, Err(ProcessError::Cancelled)));
    assert_all_gone(&[process.pid(), pids[0]], Duration::ZERO);
}

#[tokio::test]
async fn an_already_cancelled_token_prevents_the_spawn() {
    let token = CancellationToken::new();
    token.cancel();
    let options = SpawnOptions {
        cancel: Some(token),
        ..SpawnOptions::default()
    };
    let result = spawn("true", &[], options).await;
    assert!(matches!(result, Err(ProcessError::Cancelled)));
}

#[tokio::test]
async fn dropping_the_handle_tears_the_tree_down() {
    let (command, argv) = sh("sleep 1000 & echo $!; wait");
    let mut process = spawn(command, &argv, SpawnOptions::default())
        .await
        .unwrap();
    let mut pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
    pids.push(process.pid());
    drop(process);
    // The teardown runs on this runtime: yield to it while polling.
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&pid| aml_process::process_exists(pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_all_gone(&pids, Duration::ZERO);
}

#[test]
fn a_tree_outliving_its_runtime_is_reaped_by_the_janitor() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut pids = runtime.block_on(async {
        let (command, argv) = sh("sleep 1000 & echo $!; wait");
        let mut process = spawn(command, &argv, SpawnOptions::default())
            .await
            .unwrap();
        let mut pids = read_pids(&mut process.take_stdout().unwrap(), 1).await;
        pids.push(process.pid());
        // Leak the handle: only the monitor's drop, at runtime shutdown, can save the tree.
        std::mem::forget(process);
        pids
    });
    drop(runtime);
    pids.sort_unstable();
    assert_all_gone(&pids, Duration::from_secs(3));
}
