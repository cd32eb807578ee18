//! `exec`: run to completion and collect bounded output (the `<Script>` host path).

use crate::error::ProcessError;
use crate::handle::{spawn, ProcessHandle};
use crate::options::SpawnOptions;
use crate::output::OutputStream;
use crate::status::ExitStatus;

/// What a finished process produced. Output is raw bytes; decoding is the caller's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// How the leader ended (a non-zero exit is not an error here).
    pub exit: ExitStatus,
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
}

/// Runs `command` with stdin closed, collects stdout and stderr under the shared
/// `output_limit`, and returns once the leader has exited AND its whole group is dead and
/// reaped: leftovers (background jobs) are torn down like on `kill()` when the leader exits.
///
/// Errors: `Spawn`, `Cancelled`, `Timeout`, `OutputLimitExceeded` (the tree is killed and
/// reaped before any of the last three is returned).
pub async fn exec(
    command: &str,
    args: &[String],
    options: SpawnOptions,
) -> Result<Output, ProcessError> {
    let mut process = spawn(command, args, options).await?;
    if let Some(mut stdin) = process.take_stdin() {
        stdin.close();
    }
    let (Some(mut stdout), Some(mut stderr)) = (process.take_stdout(), process.take_stderr())
    else {
        unreachable!("a fresh handle owns both output streams");
    };
    let finish = async {
        let exit = process.wait().await;
        process.kill().await;
        exit
    };
    let (stdout, stderr, exit) = tokio::join!(
        collect(&mut stdout, &process),
        collect(&mut stderr, &process),
        finish
    );
    Ok(Output {
        stdout: stdout?,
        stderr: stderr?,
        exit: exit?,
    })
}

/// Reads to end of stream, or, once the group is gone, to the end of what is already buffered:
/// a process that left the group (a `setsid` daemon) may hold the pipe open forever, and must
/// not hang the caller.
async fn collect(
    stream: &mut OutputStream,
    process: &ProcessHandle,
) -> Result<Vec<u8>, ProcessError> {
    let mut bytes = Vec::new();
    let gone = process.gone();
    tokio::pin!(gone);
    loop {
        tokio::select! {
            biased;
            chunk = stream.read_chunk() => match chunk? {
                Some(chunk) => bytes.extend_from_slice(&chunk),
                None => return Ok(bytes),
            },
            () = &mut gone => break,
        }
    }
    while let Some(chunk) = stream.read_available()? {
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}
