//! `aml studio`'s server (docs/STUDIO.md): a local page over a runs directory.
//!
//! Security model, in the order a request meets it (`guard.rs`): the listener binds
//! 127.0.0.1 only; the `Host` header must name that address or `localhost` with the bound port
//! (a DNS-rebinding page reaches us under its own host name and is refused with 403); every
//! request, the page included, must carry the random token the CLI printed (query `token` or
//! header `x-aml-token`; 401 otherwise). Runs are addressed by id only (`aml_runs::run_dir`),
//! so nothing outside the runs directory is served. The page is embedded in the binary and
//! loads nothing from the network; its CSP forbids inline script, so even markup that
//! escaped the page's text-only rendering could not run.

mod assets;
mod config;
mod guard;
mod rerun;
mod routes;
mod server;

pub use config::StudioConfig;
pub use rerun::RerunCommand;
pub use server::{start, Studio};
