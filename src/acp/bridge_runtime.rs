//! The MCP bridges' own runtime: one thread driving a current-thread tokio runtime.
//!
//! Why not the process runtime (`process_runtime.rs`): a bridge Tool call is four hops
//! (agent → bridge → JS thread → bridge → agent), and on the two-worker runtime every hop
//! back from the JS thread also woke the sibling worker, because a multi-thread worker that
//! leaves the I/O driver with work to do unparks another one to take the driver over. On this
//! VM that was eight context switches per call instead of four, and each one is a cross-CPU
//! wake-up (an IPI, a VM exit). HTTP parsing and JSON are microseconds; the JS Tool is on the
//! JS thread anyway, so one thread serves every bridge without queueing behind anything slow.
//!
//! The thread is started with the first bridge and lives as long as the process; it holds no
//! Node handle, so it never keeps Node alive.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle};
use tokio::task::JoinHandle;

static HANDLE: OnceLock<Handle> = OnceLock::new();

fn handle() -> &'static Handle {
    HANDLE.get_or_init(|| {
        let runtime = Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("AML MCP bridge runtime could not start");
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("aml-mcp-bridge".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .expect("AML MCP bridge thread could not start");
        handle
    })
}

/// Runs `fut` on the bridge thread; everything it spawns (the listener's accept loop, one
/// task per connection) stays there.
pub(crate) fn spawn<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    handle().spawn(fut)
}
