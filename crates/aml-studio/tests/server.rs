//! The server over real loopback TCP: Host and token checks, the API, confinement.

use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "t0ken";

async fn get(port: u16, path: &str, host: &str) -> (u16, String) {
    request(port, "GET", path, host).await
}

async fn request(port: u16, method: &str, path: &str, host: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

async fn studio(runs: &Path) -> aml_studio::Studio {
    aml_studio::start(aml_studio::StudioConfig {
        runs: runs.to_path_buf(),
        port: 0,
        token: TOKEN.into(),
        rerun: None,
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn checks_host_then_token_and_serves_only_runs() {
    let runs = tempfile::tempdir().unwrap();
    aml_runs::create_run(
        runs.path(),
        "r1",
        r#"{"id":"r1","startedAt":1,"status":"success"}"#,
    )
    .unwrap();
    aml_runs::append_events(runs.path(), "r1", "[[0,\"trace-0\"]]\n", 1 << 20).unwrap();
    let server = studio(runs.path()).await;
    let port = server.port;
    let here = format!("127.0.0.1:{port}");

    assert_eq!(get(port, "/api/runs", &here).await.0, 401);
    assert_eq!(get(port, "/?token=wrong", &here).await.0, 401);
    assert_eq!(
        get(
            port,
            &format!("/api/runs?token={TOKEN}"),
            &format!("rebound.example:{port}")
        )
        .await
        .0,
        403
    );

    let (status, body) = get(
        port,
        &format!("/api/runs?token={TOKEN}"),
        &format!("localhost:{port}"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("\"id\":\"r1\""), "{body}");
    let (status, body) = get(
        port,
        &format!("/api/runs/r1/events?offset=0&token={TOKEN}"),
        &here,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        body.contains("trace-0") && body.contains("\"next\":16"),
        "{body}"
    );
    let (status, page) = get(port, &format!("/?token={TOKEN}"), &here).await;
    assert_eq!(status, 200);
    assert!(page.contains(&format!("/app.js?token={TOKEN}")), "{page}");

    for path in [
        "/api/runs/..%2Fsecret.txt",
        "/api/runs/../secret.txt",
        "/api/runs/..",
    ] {
        let (status, _) = get(port, &format!("{path}?token={TOKEN}"), &here).await;
        assert_eq!(status, 404, "{path}");
    }
    server.close();
    server.closed().await;
}

/// A re-run still running when the studio stops gets SIGTERM (as `aml run` gets from Ctrl-C)
/// and the studio is closed only once it ended.
#[tokio::test]
async fn a_rerun_stops_with_the_studio() {
    let runs = tempfile::tempdir().unwrap();
    let cwd = runs.path().display().to_string();
    let meta = format!(
        r#"{{"id":"r1","startedAt":1,"status":"success","workflow":"wf.tsx","cwd":"{cwd}"}}"#
    );
    aml_runs::create_run(runs.path(), "r1", &meta).unwrap();
    std::fs::write(runs.path().join("r1/journal"), "").unwrap();
    let marks = runs.path().join("marks");
    // Stands in for `aml run`: says it started, and what ended it.
    let script = format!(
        "trap 'echo term >> {m}; exit 0' TERM; echo started >> {m}; while :; do sleep 0.05; done",
        m = marks.display()
    );
    let server = aml_studio::start(aml_studio::StudioConfig {
        runs: runs.path().to_path_buf(),
        port: 0,
        token: TOKEN.into(),
        rerun: Some(aml_studio::RerunCommand {
            program: "sh".into(),
            prefix: vec!["-c".into(), script, "sh".into()],
        }),
    })
    .await
    .unwrap();
    let port = server.port;
    let here = format!("127.0.0.1:{port}");
    let (status, body) = request(
        port,
        "POST",
        &format!("/api/runs/r1/rerun?step=agent:c.&token={TOKEN}"),
        &here,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    while !std::fs::read_to_string(&marks).is_ok_and(|m| m.contains("started")) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    server.close();
    // Bounded far above the re-run's grace: a re-run left running would keep it open.
    tokio::time::timeout(std::time::Duration::from_secs(60), server.closed())
        .await
        .expect("the studio closes once its re-run ended");
    assert_eq!(std::fs::read_to_string(&marks).unwrap(), "started\nterm\n");
}
