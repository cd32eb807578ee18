//! `OutputStream::gather`: writes that arrive while the pipe is out of the reactor are all
//! there for the next read, and the stream works as before afterwards (to its end).

mod common;

use std::time::Duration;

use aml_process::{spawn, ExitStatus, SpawnOptions};
use common::sh;

#[tokio::test]
async fn writes_gather_while_paused_and_reading_resumes() {
    // Three separate writes, then a pause, then one more.
    let (command, argv) = sh("echo 1; echo 2; echo 3; read _; echo 4");
    let mut process = spawn(command, &argv, SpawnOptions::default())
        .await
        .unwrap();
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = process.take_stdout().unwrap();
    let first = stdout.read_chunk().await.unwrap().unwrap();
    let mut seen = first.clone();
    if seen != b"1\n2\n3\n" {
        // The shell's writes may have been read before all three landed: let the rest gather.
        stdout.gather(Duration::from_millis(200)).await.unwrap();
        seen.extend_from_slice(&stdout.read_chunk().await.unwrap().unwrap());
    }
    assert_eq!(seen, b"1\n2\n3\n");
    stdin.write_all(b"go\n").await.unwrap();
    stdout.gather(Duration::from_millis(50)).await.unwrap();
    let mut rest = Vec::new();
    while let Some(chunk) = stdout.read_chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(rest, b"4\n");
    assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(0));
    process.kill().await;
}
