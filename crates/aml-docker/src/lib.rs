//! A minimal Docker Engine API client for AML's Docker Sandbox (INVENTORY BS-2), napi-free.
//!
//! - [`http`]: HTTP/1.1 over the daemon's Unix socket — one connection per request
//!   (`Connection: close`), and the hijacked (upgraded) connection `exec start` returns.
//! - [`client`]: [`Docker`], a negotiated API version and the container and exec operations.
//! - [`stream`]: the multiplexed stdout/stderr framing of a non-TTY attach.
//! - [`exec`]: one command to completion under a shared output budget, a timeout and a
//!   cancellation token; [`spawn`]: a long-lived exec with streamed stdin/stdout/stderr.
//!
//! Why not the `docker` CLI: every `docker exec` pays a Go process start (~tens of ms) on
//! top of the daemon's own work; one socket round trip per API call does not.

pub mod client;
pub mod error;
pub mod exec;
pub mod http;
pub mod runner;
pub mod spawn;
pub mod stream;

pub use client::{ContainerSpec, Docker, ExecSpec};
pub use error::DockerError;
pub use exec::{ExecFault, ExecLimits, ExecOutput};
pub use runner::RunnerPool;
pub use spawn::SpawnedExec;
