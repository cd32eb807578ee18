//! The supervisor process: the child subreaper for AML's process trees, so the host is not one.
//!
//! Why: a subreaper inherits EVERY orphan below it. A host that makes itself one (as this crate
//! did) receives the orphans of the application's own child processes too, which it must never
//! reap (that could steal an exit status libuv waits for by pid), so on machines whose PID 1
//! does not reap they stayed zombies until the host exited, one pid per orphan.
//!
//! So the host starts one helper process (`use_supervisor` says how; the addon re-executes Node
//! with itself loaded) and asks it, over a socket, to start each leader with the pipes the host
//! made. The helper is the leaders' parent and their subreaper; it runs the group logic of
//! `group.rs` on each tree exactly as the host did, and reports `Exited` and `Gone` back. The
//! host keeps everything else: the pipes, output budgets, timeouts, cancellation, `wait()`.
//!
//! Death: the helper is started like a leader, so it gets SIGKILL when the host dies, and its
//! leaders get SIGKILL when it dies. If the helper cannot be started, the host falls back to
//! supervising its own trees as a subreaper (`tree/local.rs` in the host).

use std::path::PathBuf;
use std::sync::OnceLock;

pub(crate) mod client;
pub(crate) mod remote_tree;
mod server;
mod socket;
pub(crate) mod start;
mod wire;

/// How to start the supervisor process: a program that calls [`serve_supervisor`] with the
/// socket it inherits as its stdin. It starts with exactly `env` as its environment.
#[derive(Debug, Clone)]
pub struct SupervisorCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

static COMMAND: OnceLock<SupervisorCommand> = OnceLock::new();

/// Has every later spawn go through a supervisor process started with `command` (on the first
/// spawn). Only the first call counts, and only before the first spawn; returns whether it did.
pub fn use_supervisor(command: SupervisorCommand) -> bool {
    COMMAND.set(command).is_ok()
}

pub(crate) fn command() -> Option<&'static SupervisorCommand> {
    COMMAND.get()
}

/// The supervisor's entry point: serves the host connected on stdin until it disconnects.
pub fn serve_supervisor() -> std::io::Result<()> {
    server::serve(crate::sys::take_stdin()?)
}
