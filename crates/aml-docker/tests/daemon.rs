//! Against the real daemon (`scripts/docker-daemon.sh start` builds `aml-test-busybox:1`).
//! Built only with the `daemon-tests` feature (Cargo.toml: `required-features`), which
//! `npm run test:rust` turns on inside the `docker` test group, after the daemon started: a
//! machine without Docker reports the group as skipped, never these tests as passed, and the
//! plain `cargo test --workspace` before it no longer lists them as "ignored" right before
//! they run and pass.

use std::time::Duration;

use aml_docker::{ContainerSpec, Docker, ExecFault, ExecLimits, ExecSpec, SpawnedExec};
use tokio_util::sync::CancellationToken;

const IMAGE: &str = "aml-test-busybox:1";

async fn container(docker: &Docker, name: &str) -> String {
    let spec = ContainerSpec {
        name: format!("aml-crate-test-{name}-{}", std::process::id()),
        image: IMAGE.into(),
        working_dir: "/".into(),
        entrypoint: vec!["sh".into()],
        cmd: vec!["-c".into(), "while :; do sleep 3600 & wait $!; done".into()],
        ..Default::default()
    };
    let id = docker.create_container(&spec).await.unwrap();
    docker.start(&id).await.unwrap();
    id
}

fn sh(script: &str) -> ExecSpec {
    ExecSpec {
        cmd: vec!["sh".into(), "-c".into(), script.into()],
        working_dir: "/".into(),
        env: vec!["GREETING=hi".into()],
        user: None,
    }
}

fn limits() -> ExecLimits {
    ExecLimits {
        max_output_bytes: 1 << 20,
        ..Default::default()
    }
}

#[tokio::test]
async fn exec_collects_output_and_exit_codes() {
    let docker = Docker::negotiate("/var/run/docker.sock").await.unwrap();
    assert_eq!(docker.version(), "1.41");
    let id = container(&docker, "exec").await;
    let out = aml_docker::exec::run(
        &docker,
        &id,
        &sh("echo $GREETING; echo oops >&2; exit 3"),
        limits(),
    )
    .await
    .unwrap();
    assert_eq!(
        (out.exit_code, out.stdout.as_slice(), out.stderr.as_slice()),
        (3, &b"hi\n"[..], &b"oops\n"[..])
    );
    let small = ExecLimits {
        max_output_bytes: 4,
        ..limits()
    };
    let fault = aml_docker::exec::run(&docker, &id, &sh("echo 0123456789"), small)
        .await
        .unwrap_err();
    assert!(matches!(fault, ExecFault::OutputLimit(4)));
    let cancel = CancellationToken::new();
    let cancelled = ExecLimits {
        cancel: Some(cancel.clone()),
        ..limits()
    };
    let sleep = sh("sleep 30");
    let run = aml_docker::exec::run(&docker, &id, &sleep, cancelled);
    let trigger = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (fault, ()) = tokio::join!(run, trigger);
    assert!(matches!(fault.unwrap_err(), ExecFault::Cancelled));
    docker.remove(&id).await.unwrap();
    docker.remove(&id).await.unwrap();
}

#[tokio::test]
async fn spawn_streams_stdin_to_stdout() {
    let docker = Docker::negotiate("/var/run/docker.sock").await.unwrap();
    let id = container(&docker, "spawn").await;
    let child = SpawnedExec::start(&docker, &id, &sh("cat; echo done >&2; exit 7"))
        .await
        .unwrap();
    assert!(child.write(b"ping\n").await.unwrap());
    assert_eq!(child.read(false).await.unwrap(), b"ping\n");
    child.close_stdin().await;
    assert!(!child.write(b"late").await.unwrap());
    assert_eq!(child.read(true).await.unwrap(), b"done\n");
    assert_eq!(child.read(false).await, None);
    assert_eq!(child.wait().await.unwrap(), 7);
    docker.remove(&id).await.unwrap();
}

#[tokio::test]
async fn errors_carry_the_daemon_message() {
    let docker = Docker::negotiate("/var/run/docker.sock").await.unwrap();
    let missing = docker.start("aml-no-such-container").await.unwrap_err();
    assert_eq!(missing.status(), Some(404));
    assert_eq!(
        missing.to_string(),
        "No such container: aml-no-such-container"
    );
    let spec = ContainerSpec {
        name: "aml-crate-test-missing".into(),
        image: "aml-no-such-image:0".into(),
        ..Default::default()
    };
    assert_eq!(
        docker.create_container(&spec).await.unwrap_err().status(),
        Some(404)
    );
    assert!(docker.pull("aml-no-such-image:0").await.is_err());
}

#[tokio::test]
async fn the_runner_pool_keeps_exec_semantics() {
    let docker = Docker::negotiate("/var/run/docker.sock").await.unwrap();
    let id = container(&docker, "runner").await;
    let pool = aml_docker::RunnerPool::default();
    let spec = ExecSpec {
        cmd: vec![
            "sh".into(),
            "-c".into(),
            "printf '%s|' \"$0\" \"$GREETING\" \"$(pwd)\"; echo e >&2; exit 9".into(),
            "a'b\nc".into(),
        ],
        env: vec!["GREETING=hi there".into()],
        working_dir: "/tmp".into(),
        user: None,
    };
    for _ in 0..3 {
        let out = pool.run(&docker, &id, &spec, limits()).await.unwrap();
        assert_eq!(
            (out.exit_code, out.stdout.as_slice(), out.stderr.as_slice()),
            (9, &b"a'b\nc|hi there|/tmp|"[..], &b"e\n"[..])
        );
    }
    let binary = ExecSpec {
        cmd: vec![
            "sh".into(),
            "-c".into(),
            "printf 'AML-RESULT 0 0 0\\n\\000\\377'".into(),
        ],
        ..sh("")
    };
    let out = pool.run(&docker, &id, &binary, limits()).await.unwrap();
    assert_eq!(out.stdout, b"AML-RESULT 0 0 0\n\0\xff");
    let small = ExecLimits {
        max_output_bytes: 4,
        ..limits()
    };
    assert!(matches!(
        pool.run(&docker, &id, &sh("echo 0123456789"), small)
            .await
            .unwrap_err(),
        ExecFault::OutputLimit(4)
    ));
    let stdin = pool
        .run(&docker, &id, &sh("cat; echo done"), limits())
        .await
        .unwrap();
    assert_eq!(stdin.stdout, b"done\n");
    let missing = pool
        .run(
            &docker,
            &id,
            &ExecSpec {
                cmd: vec!["no-such-tool".into()],
                ..sh("")
            },
            limits(),
        )
        .await
        .unwrap();
    assert_eq!(missing.exit_code, 127);
    pool.forget(&id);
    docker.remove(&id).await.unwrap();
}

/// `GET /containers/{id}/json`'s status: 200 while the daemon still lists it, 404 once gone.
async fn inspect_status(docker: &Docker, id: &str) -> u16 {
    let path = format!("/v{}/containers/{id}/json", docker.version());
    aml_docker::http::request(docker.socket(), "GET", &path, None)
        .await
        .unwrap()
        .status
}

#[tokio::test]
async fn every_concurrent_remove_returns_only_once_the_container_is_gone() {
    let docker = Docker::negotiate("/var/run/docker.sock").await.unwrap();
    // Several removals of one running container: one does the work, the others get the
    // daemon's "removal already in progress" conflict and must wait it out.
    let id = container(&docker, "concurrent-remove").await;
    let statuses = tokio::join!(
        remove_then_inspect(&docker, &id),
        remove_then_inspect(&docker, &id),
        remove_then_inspect(&docker, &id),
        remove_then_inspect(&docker, &id)
    );
    assert_eq!(statuses, (404, 404, 404, 404));
    // Removing what is gone is fine.
    docker.remove(&id).await.unwrap();
}

async fn remove_then_inspect(docker: &Docker, id: &str) -> u16 {
    docker.remove(id).await.unwrap();
    inspect_status(docker, id).await
}
