//! A server that accepts the connection and then never answers: before, the native client
//! waited forever (`with_timeout_disabled()`, no idle limit). Now each attempt fails after the
//! idle read timeout (`AML_S3_READ_TIMEOUT_MS`, set low here) and the error names the step.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use aml_s3::{NativeS3Client, ObjectClient, S3Config, S3Credentials};

#[tokio::test]
async fn a_silent_server_fails_the_request_instead_of_hanging() {
    // This test binary is its own process: the variable affects nothing else.
    std::env::set_var(aml_s3::native_client::READ_TIMEOUT_VARIABLE, "200");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    // Accept and hold every connection, reading nothing and answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let client = NativeS3Client::new(&S3Config {
        bucket: "stalled".into(),
        region: None,
        endpoint: Some(format!("http://{address}")),
        credentials: Some(S3Credentials {
            access_key_id: "key".into(),
            secret_access_key: "secret".into(),
            session_token: None,
        }),
        force_path_style: true,
    })
    .unwrap();
    let started = Instant::now();
    // A hang guard far above 3 attempts × 200 ms plus backoff, not a timing claim.
    let result = tokio::time::timeout(Duration::from_secs(60), client.get("ws/index.json"))
        .await
        .expect("the request hung on a silent server");
    let error = result.err().expect("a silent server cannot succeed");
    let message = error.to_string();
    assert!(
        message.starts_with("S3 GetObject \"ws/index.json\" failed: "),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}
