//! Supervision through a supervisor process (`use_supervisor`): the host is not a subreaper, so
//! orphans of its OTHER children are not left to it, while AML trees keep every guarantee: the
//! whole tree is killed and reaped, orphans inside it included.
//!
//! Its own `main` (harness = false): this binary, re-executed with `SUPERVISOR`, is the
//! supervisor process, so the test needs nothing but this crate.

#[cfg(target_os = "linux")]
mod common;
#[cfg(target_os = "linux")]
mod supervised_linux;

fn main() {
    #[cfg(target_os = "linux")]
    supervised_linux::main();
}
