//! What a client says when there is no daemon at all; runs everywhere (tests/daemon.rs needs one).

use aml_docker::Docker;

#[tokio::test]
async fn a_missing_socket_is_a_connect_error() {
    let error = Docker::negotiate("/nonexistent/docker.sock")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Cannot connect to the Docker daemon at unix:///nonexistent/docker.sock. Is the docker daemon running?"
    );
    assert_eq!(error.kind(), "connect");
}
