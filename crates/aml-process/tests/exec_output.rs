//! Output that is already in the pipe when the group is gone must still be collected, on the
//! multi-thread runtime the Node binding uses (where the pipe's readiness may not have been
//! observed by the reactor yet when the group's teardown completes).

mod common;

use aml_process::{exec, ExitStatus, SpawnOptions};
use common::sh;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_output_survives_a_fast_exit() {
    for _ in 0..200 {
        // On a worker thread, as the binding runs it.
        let output = tokio::spawn(async {
            let (command, argv) = sh("echo out; echo err >&2; exit 3");
            exec(command, &argv, SpawnOptions::default()).await
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(output.exit, ExitStatus::Exited(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(output.stderr, b"err\n");
    }
}
