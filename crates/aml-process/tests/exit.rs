//! Exit statuses, environment and cwd, spawn errors, byte-exact output and stdin.

mod common;

use aml_process::{exec, spawn, ExitStatus, ProcessError, SpawnOptions};
use common::{args, sh};

#[tokio::test]
async fn reports_exit_codes() {
    let ok = exec("true", &[], SpawnOptions::default()).await.unwrap();
    assert_eq!(ok.exit, ExitStatus::Exited(0));
    assert!(ok.exit.success());
    let (command, argv) = sh("echo out; echo err >&2; exit 7");
    let failed = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    assert_eq!(failed.exit, ExitStatus::Exited(7));
    assert_eq!(failed.exit.code(), Some(7));
    assert_eq!(failed.stdout, b"out\n");
    assert_eq!(failed.stderr, b"err\n");
}

#[tokio::test]
async fn reports_death_by_signal() {
    let (command, argv) = sh("kill -9 $$");
    let output = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.exit, ExitStatus::Signaled(libc::SIGKILL));
    let (command, argv) = sh("kill -TERM $$");
    let output = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.exit.signal(), Some(libc::SIGTERM));
}

#[tokio::test]
async fn merges_env_and_sets_cwd_and_pwd() {
    let dir = std::env::temp_dir();
    let dir = dir.canonicalize().unwrap();
    let options = SpawnOptions {
        cwd: Some(dir.clone()),
        env: vec![
            ("AML_A".into(), "first".into()),
            ("AML_A".into(), "second".into()),
            ("HOME".into(), "/overridden".into()),
        ],
        ..SpawnOptions::default()
    };
    let (command, argv) =
        sh(r#"printf '%s|%s|%s|%s|%s' "$AML_A" "$HOME" "$PWD" "$(pwd -P)" "${PATH:+inherited}""#);
    let output = exec(command, &argv, options).await.unwrap();
    let expected = format!("second|/overridden|{0}|{0}|inherited", dir.display());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

#[tokio::test]
async fn can_start_from_an_empty_environment() {
    let options = SpawnOptions {
        inherit_env: false,
        env: vec![("ONLY".into(), "this".into())],
        ..SpawnOptions::default()
    };
    let output = exec("/usr/bin/env", &[], options).await.unwrap();
    assert_eq!(output.stdout, b"ONLY=this\n");
}

#[tokio::test]
async fn command_not_found_is_a_spawn_error_with_enoent() {
    let error = match spawn("aml-no-such-command-xyz", &[], SpawnOptions::default()).await {
        Ok(_) => panic!("spawned a command that does not exist"),
        Err(error) => error,
    };
    let ProcessError::Spawn { command, source } = &error else {
        panic!("expected a Spawn error, got {error:?}");
    };
    assert_eq!(command, "aml-no-such-command-xyz");
    assert_eq!(source.raw_os_error(), Some(libc::ENOENT));
    assert_eq!(
        error.io_error().unwrap().kind(),
        std::io::ErrorKind::NotFound
    );
    assert!(error
        .to_string()
        .starts_with("failed to spawn `aml-no-such-command-xyz`"));
}

#[tokio::test]
async fn missing_cwd_is_a_spawn_error() {
    let options = SpawnOptions {
        cwd: Some("/definitely/not/a/dir".into()),
        ..SpawnOptions::default()
    };
    let error = exec("true", &[], options).await.unwrap_err();
    assert!(matches!(error, ProcessError::Spawn { .. }), "{error:?}");
}

#[tokio::test]
async fn preserves_non_utf8_bytes() {
    let (command, argv) = sh(r"printf '\377\376\000abc\200'; printf '\351' >&2");
    let output = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    assert_eq!(output.stdout, [0xff, 0xfe, 0x00, b'a', b'b', b'c', 0x80]);
    assert_eq!(output.stderr, [0xe9]);
}

#[tokio::test]
async fn stdin_round_trips_and_close_delivers_eof() {
    let mut process = spawn("cat", &[], SpawnOptions::default()).await.unwrap();
    assert_eq!(process.id(), format!("local-process:{}", process.pid()));
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = process.take_stdout().unwrap();
    stdin.write_all(b"hello \xff world").await.unwrap();
    stdin.close();
    assert!(stdin.is_closed());
    assert!(matches!(
        stdin.write_all(b"x").await,
        Err(ProcessError::StdinClosed)
    ));
    let mut echoed = Vec::new();
    while let Some(chunk) = stdout.read_chunk().await.unwrap() {
        echoed.extend_from_slice(&chunk);
    }
    assert_eq!(echoed, b"hello \xff world");
    assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(0));
    process.kill().await;
}

#[tokio::test]
async fn exec_closes_stdin_immediately() {
    let output = exec("cat", &args(&[]), SpawnOptions::default())
        .await
        .unwrap();
    assert_eq!(output.exit, ExitStatus::Exited(0));
    assert!(output.stdout.is_empty());
}

/// Compile-time check: the napi binding drives these on a multi-threaded runtime.
#[test]
fn handles_errors_and_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    fn send_sync<T: Send + Sync>() {}
    send_sync::<aml_process::ProcessHandle>();
    send_sync::<aml_process::OutputStream>();
    send_sync::<aml_process::ProcessStdin>();
    send_sync::<ProcessError>();
    let argv = args(&["x"]);
    let running = spawn("true", &argv, SpawnOptions::default());
    send(&running);
    let collecting = exec("true", &argv, SpawnOptions::default());
    send(&collecting);
}
