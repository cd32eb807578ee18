use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::seal::{Place, Sealer};

const SECRET: &str = "a secret the workers share, 32+ chars";

/// A `page` answer (the frames of page.rs) of `entries`, then `next`.
fn page(entries: &[&str], next: Option<u64>) -> Vec<u8> {
    let mut bytes = next.unwrap_or(u64::MAX).to_be_bytes().to_vec();
    for entry in entries {
        bytes.extend_from_slice(&(entry.len() as u32).to_be_bytes());
        bytes.extend_from_slice(entry.as_bytes());
    }
    bytes
}

type Served = tokio::task::JoinHandle<Vec<String>>;

/// Answers one request per connection with the next of `answers` (status line, body);
/// resolves with the requests' texts.
async fn serve(answers: Vec<(&'static str, String)>) -> (String, Served) {
    let answers = answers
        .into_iter()
        .map(|(status, body)| (status, body.into_bytes()));
    serve_bytes(answers.collect()).await
}

async fn serve_bytes(answers: Vec<(&'static str, Vec<u8>)>) -> (String, Served) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let mut requests = Vec::new();
        for (status, body) in answers {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 65536];
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
            let head = format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(&body).await.unwrap();
            requests.push(String::from_utf8(request).unwrap());
        }
        requests
    });
    (url, served)
}

fn config(url: &str, workflow: &str) -> JournalConfig {
    JournalConfig {
        ingress: url.to_owned(),
        object: "AmlJournal".to_owned(),
        workflow: workflow.to_owned(),
        headers: vec![
            ("authorization".to_owned(), "Bearer t".to_owned()),
            ("X-AML-Journal-Attempt".to_owned(), "spoofed".to_owned()),
        ],
        timeout: Duration::from_secs(5),
        secret: SECRET.to_owned(),
        run: "run-1".to_owned(),
        attempt: Some("attempt-1".to_owned()),
    }
}

fn journal(url: &str, workflow: &str) -> IngressJournal {
    IngressJournal::new(config(url, workflow)).unwrap()
}

/// An entry as a worker with `secret` would have stored it for run `run` of workflow "w".
fn stored(secret: &str, run: &str, key: &str, text: &str) -> String {
    let place = Place {
        object: "AmlJournal",
        workflow: "w",
        run,
        key,
        digest: "d",
    };
    let content = format!(r#"{{"kind":"agent","value":{{"text":"{text}"}}}}"#);
    let sealed = Sealer::new(secret)
        .unwrap()
        .seal(&place, content.as_bytes())
        .unwrap();
    format!(r#"{{"key":"{key}","digest":"d","sealed":"{sealed}"}}"#)
}

#[tokio::test]
async fn record_posts_a_sealed_entry_to_the_keyed_object_with_the_protocol_headers() {
    let (url, served) = serve(vec![("200 OK", "null".into())]).await;
    let entry = r#"{"key":"0/a","digest":"d","kind":"agent","value":{"text":"secret answer"}}"#;
    journal(&url, "order 7/ä").record(entry).await.unwrap();
    let request = served.await.unwrap().remove(0);
    assert!(
        request.starts_with("POST /AmlJournal/order%207%2F%C3%A4/record HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(request.contains("authorization: Bearer t\r\n"));
    assert!(request.contains("x-aml-journal-run: run-1\r\n"));
    // The caller's header of the fence's name is replaced by the attempt's own token.
    assert!(request.contains("x-aml-journal-attempt: attempt-1\r\n"));
    assert!(!request.contains("spoofed"));
    let body = &request[request.find("\r\n\r\n").unwrap() + 4..];
    assert_eq!(entry_problem(body), None, "{body}");
    assert!(
        body.starts_with(r#"{"key":"0/a","digest":"d","sealed":""#),
        "{body}"
    );
    // The answer travels sealed: a reader of the ingress does not see it.
    assert!(!body.contains("secret answer"));
}

#[tokio::test]
async fn a_recorded_entry_loads_back_through_pages_and_forged_ones_are_ignored() {
    let genuine = stored(SECRET, "run-1", "k1", "one");
    let other_secret = stored(
        "another deployment's secret, 32+ chars",
        "run-1",
        "k2",
        "forged",
    );
    let other_run = stored(SECRET, "run-0", "k3", "an old run's answer");
    let malformed = r#"{"key":"k4","digest":"d"}"#;
    let tampered = genuine.replace(r#""digest":"d""#, r#""digest":"e""#);
    let second = stored(SECRET, "run-1", "k5", "five");
    let answers = vec![
        ("200 OK", br#"{"count":7}"#.to_vec()),
        (
            "200 OK",
            page(&[&genuine, &other_secret, &other_run], Some(3)),
        ),
        (
            "200 OK",
            page(&[malformed, "not json", &tampered, &second], None),
        ),
    ];
    let (url, served) = serve_bytes(answers).await;
    let loaded = journal(&url, "w").load().await.unwrap();
    assert_eq!(
        loaded.entries,
        r#"[{"key":"k1","digest":"d","kind":"agent","value":{"text":"one"}},{"key":"k5","digest":"d","kind":"agent","value":{"text":"five"}}]"#
    );
    assert_eq!(loaded.ignored, 5);
    let requests = served.await.unwrap();
    assert!(requests[0].starts_with("POST /AmlJournal/w/load HTTP/1.1\r\n"));
    assert!(requests[1].starts_with("POST /AmlJournal/w/page HTTP/1.1\r\n"));
    assert!(requests[1].ends_with(r#"{"from":0}"#));
    assert!(requests[2].ends_with(r#"{"from":3}"#));
}

#[tokio::test]
async fn an_empty_journal_loads_in_one_request_and_a_page_that_stalls_is_refused() {
    let (url, served) = serve(vec![("200 OK", r#"{"count":0}"#.into())]).await;
    assert_eq!(journal(&url, "w").load().await.unwrap().entries, "[]");
    assert_eq!(served.await.unwrap().len(), 1);
    let answers = vec![
        ("200 OK", br#"{"count":2}"#.to_vec()),
        ("200 OK", page(&[], Some(0))),
    ];
    let (url, _) = serve_bytes(answers).await;
    let error = journal(&url, "w").load().await.err().unwrap();
    assert_eq!(error.failure(), Failure::Unavailable);
    // A truncated frame is not a page.
    let mut cut = page(&["{}"], None);
    cut.pop();
    let answers = vec![("200 OK", br#"{"count":1}"#.to_vec()), ("200 OK", cut)];
    let (url, _) = serve_bytes(answers).await;
    let error = journal(&url, "w").load().await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "Restate answered a body that is not a page of entries"
    );
    let (url, _) = serve(vec![("200 OK", r#"[{"key":"k"}]"#.into())]).await;
    let error = journal(&url, "w").load().await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "Restate answered a body that is not { count }"
    );
}

#[tokio::test]
async fn failures_are_classed_by_what_a_retry_can_do() {
    for (status, failure) in [
        ("500 Internal Server Error", Failure::Unavailable),
        ("503 Service Unavailable", Failure::Unavailable),
        ("429 Too Many Requests", Failure::Unavailable),
        ("408 Request Timeout", Failure::Unavailable),
        ("409 Conflict", Failure::Fenced),
        ("404 Not Found", Failure::Deployment),
        ("401 Unauthorized", Failure::Rejected),
        ("400 Bad Request", Failure::Rejected),
    ] {
        let (url, _) = serve(vec![(status, r#"{"message":"boom"}"#.into())]).await;
        let error = journal(&url, "w")
            .record(r#"{"key":"k","digest":"d","kind":"agent","value":{}}"#)
            .await
            .unwrap_err();
        assert_eq!(error.failure(), failure, "{status}");
        let code = &status[..3];
        assert_eq!(
            error.to_string(),
            format!(r#"Restate answered {code}: {{"message":"boom"}}"#)
        );
    }
    let (url, _) = serve(vec![("404 Not Found", "{}".into())]).await;
    let error = journal(&url, "w").load().await.err().unwrap();
    assert_eq!(
        error.explained("AmlJournal"),
        "Restate answered 404: {} (the journal object AmlJournal is not registered at this ingress: bind the workflow's `journal` to the same endpoint as its `workflow` and register the deployment)"
    );
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let error = journal(&url, "w").load().await.err().unwrap();
    assert!(matches!(error, IngressError::Transport(_)), "{error}");
    assert_eq!(error.failure(), Failure::Unavailable);
    assert!(error.to_string().contains("refused"), "{error}");
}

#[tokio::test]
async fn an_entry_over_the_bound_fails_before_anything_is_sent() {
    // Nothing listens here: a request would fail as Transport, not TooLarge.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let big = "x".repeat(MAX_ENTRY_BYTES);
    let entry = format!(r#"{{"key":"k","digest":"d","kind":"agent","value":{{"text":"{big}"}}}}"#);
    let error = journal(&url, "w").record(&entry).await.unwrap_err();
    assert_eq!(error.failure(), Failure::TooLarge);
    assert!(
        error.to_string().starts_with("step k is ")
            && error.to_string().ends_with(&format!(
                " bytes as stored, over the {MAX_ENTRY_BYTES}-byte limit of one entry"
            )),
        "{error}"
    );
    let error = journal(&url, "w").record("{}").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "AML journal entries must be { key, digest, kind, value } records"
    );
}

#[test]
fn the_stored_shape_is_one_rule() {
    assert_eq!(
        entry_problem(r#"{"key":"k","digest":"d","sealed":"s"}"#),
        None
    );
    let shape = "AML Restate journal entries must be { key, digest, sealed } records of strings";
    for bad in [
        r#"{"key":"k","digest":"d"}"#,
        r#"{"key":"k","digest":"d","kind":"agent","value":{}}"#,
        r#"{"key":"k","digest":"d","sealed":"s","kind":"agent"}"#,
        r#"{"key":1,"digest":"d","sealed":"s"}"#,
        r#"null"#,
    ] {
        assert_eq!(entry_problem(bad).as_deref(), Some(shape), "{bad}");
    }
    assert_eq!(
        entry_problem(r#"{"key":"","digest":"d","sealed":"s"}"#).as_deref(),
        Some("AML Restate journal entry keys must have 1 to 65536 bytes")
    );
}

#[test]
fn an_ingress_that_is_not_an_http_url_or_a_short_secret_is_refused() {
    for bad in ["not a url", "ftp://x", "mailto:a@b"] {
        let error = IngressJournal::new(config(bad, "k")).err().unwrap();
        assert!(matches!(error, IngressError::Config(_)), "{bad}: {error}");
    }
    let mut short = config("http://h:1", "k");
    short.secret = "short".to_owned();
    let error = IngressJournal::new(short).err().unwrap();
    assert_eq!(
        error.to_string(),
        "secret must be a string of at least 32 characters"
    );
    let mut bad_header = config("http://h:1", "k");
    bad_header.headers.push(("a b".to_owned(), "v".to_owned()));
    let error = IngressJournal::new(bad_header).err().unwrap();
    assert_eq!(
        error.to_string(),
        r#"header "a b" is not a valid HTTP header name"#
    );
    let mut bad_value = config("http://h:1", "k");
    bad_value
        .headers
        .push(("x-a".to_owned(), "line\nbreak".to_owned()));
    let error = IngressJournal::new(bad_value).err().unwrap();
    assert_eq!(
        error.to_string(),
        r#"header "x-a" has a value that is not valid in HTTP"#
    );
    let prefixed = IngressJournal::new(config("http://h:1/restate/", "k")).unwrap();
    assert_eq!(
        prefixed.record.as_str(),
        "http://h:1/restate/AmlJournal/k/record"
    );
}
