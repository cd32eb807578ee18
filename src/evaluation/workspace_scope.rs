//! Filesystem primitives in the binding: the `<Workspace>` placement claim and the channel
//! a `<File>` / `<Include>` writes into (crates/aml-engine/src/workspace.rs).

use aml_engine::Channel;
use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;

/// Claims the one `<Workspace>` of the domain for the primitive on top of `task`: `null`,
/// or the placement error's message (the facade throws it as an `EvaluationError`).
#[napi]
pub fn claim_workspace(domain: u32, task: u32) -> Result<Option<String>> {
    guard(|| {
        registry::with(domain, |d| {
            let claim = d.claim_workspace(task).map_err(engine_error)?;
            Ok(claim.err().map(|e| e.to_string()))
        })
    })
}

/// `"root"`, `"agent"` or `"text"`: where the primitive on top of `task` writes.
#[napi]
pub fn primitive_channel(domain: u32, task: u32) -> Result<&'static str> {
    guard(|| {
        registry::with(domain, |d| {
            Ok(match d.channel(task).map_err(engine_error)? {
                Channel::Root => "root",
                Channel::Agent => "agent",
                Channel::Text => "text",
            })
        })
    })
}
