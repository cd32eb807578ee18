//! A host running with its stdin closed (a daemon, `node <&-`) gets fd 0 back from the next
//! `pipe()`. The child's ends of its pipes must still land on the right standard descriptors:
//! dup2-ing a pipe that sits on 0 onto 0 and then another one onto 0... would cross the wires.
//! A binary of its own, because it closes this process's stdin.

mod common;

use aml_process::{spawn, ExitStatus, OutputStream, SpawnOptions};
use common::sh;

#[tokio::test]
async fn stdio_is_wired_right_when_the_host_has_no_stdin() {
    // SAFETY: closes this test process's stdin, which nothing in this binary reads.
    assert_eq!(unsafe { libc::close(0) }, 0);
    for round in 0..3 {
        let (command, argv) = sh("cat; echo err >&2");
        let mut process = spawn(command, &argv, SpawnOptions::default())
            .await
            .unwrap();
        let mut stdin = process.take_stdin().unwrap();
        stdin.write_all(b"hello").await.unwrap();
        stdin.close();
        let stdout = read_all(&mut process.take_stdout().unwrap()).await;
        let stderr = read_all(&mut process.take_stderr().unwrap()).await;
        assert_eq!(stdout, b"hello", "round {round}");
        assert_eq!(stderr, b"err\n", "round {round}");
        assert_eq!(process.wait().await.unwrap(), ExitStatus::Exited(0));
        process.kill().await;
    }
}

async fn read_all(stream: &mut OutputStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.read_chunk().await.unwrap() {
        bytes.extend_from_slice(&chunk);
    }
    bytes
}
