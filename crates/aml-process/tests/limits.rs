//! The shared output budget and the timeout both kill the whole tree.

mod common;

use std::time::{Duration, Instant};

use aml_process::{exec, spawn, ProcessError, SpawnOptions};
use common::{assert_all_gone, is_limit, read_pids, sh};

fn limited(limit: usize) -> SpawnOptions {
    SpawnOptions {
        output_limit: Some(limit),
        ..SpawnOptions::default()
    }
}

#[tokio::test]
async fn exec_fails_when_output_exceeds_the_limit() {
    let error = exec("yes", &[], limited(1000)).await.unwrap_err();
    assert!(is_limit(&error, 1000), "{error:?}");
    assert_eq!(error.to_string(), "process output exceeded 1000 bytes");
}

#[tokio::test]
async fn the_budget_is_shared_by_stdout_and_stderr() {
    let (command, argv) = sh("head -c 600 /dev/zero; head -c 600 /dev/zero >&2");
    let error = exec(command, &argv, limited(1000)).await.unwrap_err();
    assert!(is_limit(&error, 1000), "{error:?}");
    // Exactly at the limit is allowed.
    let output = exec(command, &argv, limited(1200)).await.unwrap();
    assert_eq!((output.stdout.len(), output.stderr.len()), (600, 600));
}

#[tokio::test]
async fn exceeding_the_limit_kills_the_tree() {
    // Pids go to stderr first, then stdout floods (and blocks once the pipe is full).
    let script = "sleep 1000 & echo $! >&2; sleep 1000 & echo $! >&2; exec yes";
    let (command, argv) = sh(script);
    let mut process = spawn(command, &argv, limited(4096)).await.unwrap();
    let mut stderr = process.take_stderr().unwrap();
    let mut pids = read_pids(&mut stderr, 2).await;
    pids.push(process.pid());
    let mut stdout = process.take_stdout().unwrap();
    let error = loop {
        match stdout.read_chunk().await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("yes stopped on its own"),
            Err(error) => break error,
        }
    };
    assert!(is_limit(&error, 4096), "{error:?}");
    // Every later read, on either stream, reports the same.
    assert!(is_limit(&stderr.read_chunk().await.unwrap_err(), 4096));
    assert!(is_limit(&process.wait().await.unwrap_err(), 4096));
    process.kill().await;
    assert_all_gone(&pids, Duration::ZERO);
}

#[tokio::test]
async fn exec_times_out() {
    let options = SpawnOptions {
        timeout: Some(Duration::from_millis(200)),
        ..SpawnOptions::default()
    };
    let started = Instant::now();
    let error = exec("sleep", &["10".into()], options).await.unwrap_err();
    assert!(
        matches!(error, ProcessError::Timeout { timeout } if timeout == Duration::from_millis(200)),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(error.to_string(), "process timed out after 200 ms");
}

#[tokio::test]
async fn a_timeout_kills_the_tree() {
    let options = SpawnOptions {
        timeout: Some(Duration::from_millis(200)),
        ..SpawnOptions::default()
    };
    let (command, argv) = sh("sleep 1000 & echo $!; sleep 1000 & echo $!; wait");
    let mut process = spawn(command, &argv, options).await.unwrap();
    let mut pids = read_pids(&mut process.take_stdout().unwrap(), 2).await;
    pids.push(process.pid());
    assert!(matches!(
        process.wait().await,
        Err(ProcessError::Timeout { .. })
    ));
    process.kill().await;
    assert_all_gone(&pids, Duration::ZERO);
}

#[tokio::test]
async fn exec_finishing_in_time_is_not_a_timeout() {
    let options = SpawnOptions {
        timeout: Some(Duration::from_secs(10)),
        ..SpawnOptions::default()
    };
    let output = exec("true", &[], options).await.unwrap();
    assert!(output.exit.success());
}
