use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{IngressError, IngressJournal};

/// Serves one HTTP/1.1 request with `status` and `body`; resolves with the request's text.
async fn serve_once(
    status: &'static str,
    body: &'static str,
) -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let n = socket.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let answer = format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
        socket.write_all(answer.as_bytes()).await.unwrap();
        String::from_utf8(request).unwrap()
    });
    (url, served)
}

fn journal(url: &str, key: &str) -> IngressJournal {
    let headers = vec![("authorization".to_owned(), "Bearer t".to_owned())];
    IngressJournal::new(url, "AmlJournal", key, headers, Duration::from_secs(5)).unwrap()
}

#[tokio::test]
async fn record_posts_the_entry_to_the_keyed_object_with_the_headers() {
    let (url, served) = serve_once("200 OK", "null").await;
    let entry = r#"{"key":"0/a","digest":"d","kind":"agent","value":{"text":"x"}}"#;
    journal(&url, "order 7/ä")
        .record(entry.to_owned())
        .await
        .unwrap();
    let request = served.await.unwrap();
    assert!(
        request.starts_with("POST /AmlJournal/order%207%2F%C3%A4/record HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(request.contains("authorization: Bearer t\r\n"));
    assert!(request.ends_with(entry));
}

#[tokio::test]
async fn load_returns_the_array_and_refuses_anything_else() {
    let (url, served) = serve_once("200 OK", r#"[{"key":"k"}]"#).await;
    assert_eq!(journal(&url, "w").load().await.unwrap(), r#"[{"key":"k"}]"#);
    assert!(served
        .await
        .unwrap()
        .starts_with("POST /AmlJournal/w/load HTTP/1.1\r\n"));
    let (url, _) = serve_once("200 OK", r#"{"not":"a list"}"#).await;
    assert!(matches!(
        journal(&url, "w").load().await,
        Err(IngressError::Body)
    ));
}

#[tokio::test]
async fn a_failed_answer_or_no_server_is_an_error_that_says_what_happened() {
    let (url, _) = serve_once("500 Internal Server Error", r#"{"message":"boom"}"#).await;
    let error = journal(&url, "w").record("{}".into()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"Restate answered 500: {"message":"boom"}"#
    );
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let error = journal(&url, "w").load().await.unwrap_err();
    assert!(matches!(error, IngressError::Transport(_)), "{error}");
    assert!(error.to_string().contains("refused"), "{error}");
}

#[test]
fn an_ingress_that_is_not_an_http_url_is_refused() {
    for bad in ["not a url", "ftp://x", "mailto:a@b"] {
        let error = IngressJournal::new(bad, "O", "k", Vec::new(), Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(matches!(error, IngressError::Config(_)), "{bad}: {error}");
    }
    let prefixed = IngressJournal::new(
        "http://h:1/restate/",
        "O",
        "k",
        Vec::new(),
        Duration::from_secs(1),
    )
    .unwrap();
    assert_eq!(prefixed.record.as_str(), "http://h:1/restate/O/k/record");
}
