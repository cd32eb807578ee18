//! The HTTP client against a daemon that misbehaves, over a real Unix socket: answers that
//! would make it allocate without bound, heads that never end, and silence.

use std::path::{Path, PathBuf};
use std::time::Duration;

use aml_docker::http::{request_with, MAX_BODY};
use aml_docker::DockerError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

/// A daemon that reads one request and then writes `answer` (and stays connected). Its socket
/// lives in a temporary directory removed when the returned guard drops.
fn daemon(name: &str, answer: Vec<u8>) -> Daemon {
    let dir = tempfile::Builder::new()
        .prefix(&format!("aml-hostile-{name}-"))
        .tempdir()
        .unwrap();
    let socket = dir.path().join("docker.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let _ = stream.write_all(&answer).await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    Daemon { socket, _dir: dir }
}

struct Daemon {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

async fn ask(socket: &Path, idle: Duration) -> Result<aml_docker::http::Response, DockerError> {
    request_with(socket, "GET", "/v1.41/containers/x/json", None, idle).await
}

#[tokio::test]
async fn a_declared_length_above_the_bound_is_refused_before_reading() {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 1u64 << 40);
    let daemon = daemon("length", head.into_bytes());
    let error = ask(&daemon.socket, Duration::from_secs(30))
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        format!(
            "the Docker daemon's answer to GET /v1.41/containers/x/json exceeds {MAX_BODY} bytes"
        )
    );
}

#[tokio::test]
async fn a_head_line_that_never_ends_is_refused_at_the_head_bound() {
    let mut answer = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
    answer.extend(std::iter::repeat_n(b'a', 256 * 1024));
    let daemon = daemon("head", answer);
    let error = ask(&daemon.socket, Duration::from_secs(30))
        .await
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "truncated response head");
}

#[tokio::test]
async fn an_undeclared_body_above_the_bound_is_cut_off() {
    let mut answer = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    answer.extend(std::iter::repeat_n(b'{', MAX_BODY + 1));
    let daemon = daemon("body", answer);
    let error = ask(&daemon.socket, Duration::from_secs(30))
        .await
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .ends_with(&format!("exceeds {MAX_BODY} bytes")),
        "{error}"
    );
}

#[tokio::test]
async fn a_silent_daemon_fails_the_request_naming_it() {
    let daemon = daemon("silent", Vec::new());
    let error = ask(&daemon.socket, Duration::from_millis(200))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), "timeout");
    assert_eq!(
        error.to_string(),
        "the Docker daemon did not answer GET /v1.41/containers/x/json within 200 ms"
    );
}
