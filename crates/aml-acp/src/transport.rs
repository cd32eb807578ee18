//! The agent process behind a session: either a host child that `aml-process` supervises
//! (local launch), or an *external* process that someone else supervises (Sandbox launch:
//! the Sandbox's `spawn()`), whose pipes the binding pumps and whose exit it reports.
//!
//! The external side is a set of channels. [`ExternalPort`] is what the pump holds: it feeds
//! stdout/stderr chunks in (awaiting capacity, so a slow session slows the pump, which stops
//! reading the guest's stdout), takes stdin bytes out, reports the exit and answers kill
//! requests. The session never sees the difference beyond [`Child`], [`Input`], [`Output`].

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aml_process::{ExitStatus, OutputStream, ProcessError, ProcessHandle, ProcessStdin};
use tokio::sync::{mpsc, watch};

/// Chunks in flight per pipe between the pump and the session.
const PIPE_CHUNKS: usize = 16;
/// Lines queued for stdin. Small: the writer drains it as fast as the agent reads.
const STDIN_LINES: usize = 64;
/// How long an external kill may take beyond the kill grace before cleanup goes on.
const KILL_SLACK: Duration = Duration::from_secs(5);

/// How an external process ended, as its supervisor reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalExit {
    Exited(i32),
    Signaled(i32),
    /// `wait()` failed for another reason.
    Failed(String),
}

/// The pump's side of an external agent process.
pub struct ExternalPort {
    stdout: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    stderr: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    stdin: tokio::sync::Mutex<mpsc::Receiver<Vec<u8>>>,
    exit: watch::Sender<Option<ExternalExit>>,
    kill: watch::Receiver<bool>,
    killed: watch::Sender<bool>,
}

/// Which output pipe a chunk belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    Stdout,
    Stderr,
}

impl ExternalPort {
    fn sender(&self, pipe: Pipe) -> Option<mpsc::Sender<Vec<u8>>> {
        let slot = match pipe {
            Pipe::Stdout => &self.stdout,
            Pipe::Stderr => &self.stderr,
        };
        slot.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Hands one output chunk to the session, waiting for room. `false` once the session no
    /// longer reads that pipe (the pump may stop reading it).
    pub async fn feed(&self, pipe: Pipe, chunk: Vec<u8>) -> bool {
        match self.sender(pipe) {
            Some(sender) => sender.send(chunk).await.is_ok(),
            None => false,
        }
    }

    /// End of an output pipe.
    pub fn end(&self, pipe: Pipe) {
        let slot = match pipe {
            Pipe::Stdout => &self.stdout,
            Pipe::Stderr => &self.stderr,
        };
        slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// The next bytes for the agent's stdin; `None` when stdin is to be closed.
    pub async fn next_input(&self) -> Option<Vec<u8>> {
        self.stdin.lock().await.recv().await
    }

    /// The process ended (reported once; later reports are ignored).
    pub fn exited(&self, exit: ExternalExit) {
        self.exit.send_if_modified(|slot| {
            if slot.is_some() {
                return false;
            }
            *slot = Some(exit);
            true
        });
    }

    /// Resolves when the session asks for the process tree to be killed.
    pub async fn kill_requested(&self) {
        let mut kill = self.kill.clone();
        let _ = kill.wait_for(|asked| *asked).await;
    }

    /// The supervisor's kill has finished (successfully or not).
    pub fn killed(&self) {
        self.killed.send_replace(true);
    }
}

/// The session's side of an external agent process.
pub struct ExternalAgent {
    id: String,
    stdout: mpsc::Receiver<Vec<u8>>,
    stderr: mpsc::Receiver<Vec<u8>>,
    stdin: mpsc::Sender<Vec<u8>>,
    exit: watch::Receiver<Option<ExternalExit>>,
    kill: watch::Sender<bool>,
    killed: watch::Receiver<bool>,
}

/// A connected pair for a process with execution id `id` (already started by its supervisor).
pub fn external(id: String) -> (ExternalAgent, Arc<ExternalPort>) {
    let (stdout_tx, stdout) = mpsc::channel(PIPE_CHUNKS);
    let (stderr_tx, stderr) = mpsc::channel(PIPE_CHUNKS);
    let (stdin, stdin_rx) = mpsc::channel(STDIN_LINES);
    let (exit_tx, exit) = watch::channel(None);
    let (kill, kill_rx) = watch::channel(false);
    let (killed_tx, killed) = watch::channel(false);
    let port = ExternalPort {
        stdout: Mutex::new(Some(stdout_tx)),
        stderr: Mutex::new(Some(stderr_tx)),
        stdin: tokio::sync::Mutex::new(stdin_rx),
        exit: exit_tx,
        kill: kill_rx,
        killed: killed_tx,
    };
    let agent = ExternalAgent {
        id,
        stdout,
        stderr,
        stdin,
        exit,
        kill,
        killed,
    };
    (agent, Arc::new(port))
}

/// The agent's stdin.
pub enum Input {
    Local(ProcessStdin),
    External(mpsc::Sender<Vec<u8>>),
}

impl Input {
    pub async fn write_all(&mut self, data: Vec<u8>) -> Result<(), ()> {
        match self {
            Input::Local(stdin) => stdin.write_all(&data).await.map_err(drop),
            Input::External(sender) => sender.send(data).await.map_err(drop),
        }
    }
}

/// One of the agent's output pipes.
pub enum Output {
    Local(OutputStream),
    External(mpsc::Receiver<Vec<u8>>),
}

impl Output {
    /// Waits `pause` so small writes gather; a host pipe is taken out of the reactor
    /// meanwhile (see `OutputStream::gather`), so they wake nobody.
    pub async fn gather(&mut self, pause: Duration) -> Result<(), String> {
        match self {
            Output::Local(stream) => stream.gather(pause).await.map_err(|e| e.to_string()),
            Output::External(_) => {
                tokio::time::sleep(pause).await;
                Ok(())
            }
        }
    }

    pub async fn read_chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self {
            Output::Local(stream) => stream.read_chunk().await.map_err(|e| e.to_string()),
            Output::External(receiver) => Ok(receiver.recv().await),
        }
    }
}

/// The external process without its pipes (they went to the connection).
pub struct ExternalChild {
    id: String,
    exit: watch::Receiver<Option<ExternalExit>>,
    kill: watch::Sender<bool>,
    killed: watch::Receiver<bool>,
}

/// The agent process as the session drives it.
pub enum Child {
    Local(ProcessHandle),
    External(ExternalChild),
}

impl Child {
    pub fn id(&self) -> String {
        match self {
            Child::Local(process) => process.id(),
            Child::External(child) => child.id.clone(),
        }
    }

    /// The exit, memoised (every call returns the same outcome once known).
    pub async fn wait(&self) -> Result<ExitStatus, ProcessError> {
        match self {
            Child::Local(process) => process.wait().await,
            Child::External(child) => {
                let mut exit = child.exit.clone();
                let stopped = || ExternalExit::Failed("the Sandbox process pump stopped".into());
                // An `Err` means the pump is gone without a report: nobody can tell us more.
                let outcome = match exit.wait_for(Option::is_some).await {
                    Ok(seen) => seen.clone().unwrap_or_else(stopped),
                    Err(_) => stopped(),
                };
                match outcome {
                    ExternalExit::Exited(code) => Ok(ExitStatus::Exited(code)),
                    ExternalExit::Signaled(signal) => Ok(ExitStatus::Signaled(signal)),
                    ExternalExit::Failed(message) => Err(ProcessError::Io {
                        context: "Sandbox process wait failed",
                        source: Arc::new(io::Error::other(message)),
                    }),
                }
            }
        }
    }

    /// Kills the whole tree; resolves once the supervisor says it is gone (or, for an
    /// external supervisor that never answers, after `grace` plus some slack).
    pub async fn kill(&self, grace: Duration) {
        match self {
            Child::Local(process) => process.kill().await,
            Child::External(child) => {
                child.kill.send_replace(true);
                let mut killed = child.killed.clone();
                let _ =
                    tokio::time::timeout(grace + KILL_SLACK, killed.wait_for(|done| *done)).await;
            }
        }
    }
}

impl ExternalAgent {
    /// Splits into the process and its three pipes.
    pub fn split(self) -> (ExternalChild, Input, Output, Output) {
        let child = ExternalChild {
            id: self.id,
            exit: self.exit,
            kill: self.kill,
            killed: self.killed,
        };
        (
            child,
            Input::External(self.stdin),
            Output::External(self.stdout),
            Output::External(self.stderr),
        )
    }
}
