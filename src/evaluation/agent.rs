//! The Agent half of the binding: entering Agent/System/FollowUp, Tool and MCP grants, the ready
//! plan, the provider result, and the per-domain scheduler.

use aml_engine::McpKind;
use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;

/// A transparent wrapper (Context Provider) on top: feed its children.
#[napi]
pub fn enter_transparent(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.enter_transparent(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn enter_system(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.enter_system(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn enter_follow_up(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.enter_follow_up(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// `reference` is the facade's index of the tool object in its per-domain table.
#[napi]
pub fn grant_tool(domain: u32, task: u32, name: String, reference: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.grant_tool(task, &name, reference)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// `kind` is `"named"`, `"stdio"` or `"streamable-http"`; `reference` is the facade's index of
/// the provider-facing `AgentMcpServer` entry in its per-domain table.
#[napi]
pub fn grant_mcp(
    domain: u32,
    task: u32,
    name: String,
    kind: String,
    reference: u32,
) -> Result<u32> {
    guard(|| {
        let kind = McpKind::parse(&kind)
            .ok_or_else(|| napi::Error::from_reason(format!("unknown MCP server kind {kind:?}")))?;
        registry::with(domain, |d| {
            d.grant_mcp(task, &name, kind, reference)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// Tool references granted to the ready Agent on top, in grant order.
#[napi]
pub fn agent_tools(domain: u32, task: u32) -> Result<Vec<u32>> {
    guard(|| {
        registry::with(domain, |d| {
            let plan = d.agent_plan(task).map_err(engine_error)?;
            Ok(plan.tools().iter().map(|t| t.reference).collect())
        })
    })
}

/// MCP references granted to the ready Agent on top, in grant order.
#[napi]
pub fn agent_mcp(domain: u32, task: u32) -> Result<Vec<u32>> {
    guard(|| {
        registry::with(domain, |d| {
            let plan = d.agent_plan(task).map_err(engine_error)?;
            Ok(plan.mcp().iter().map(|m| m.reference).collect())
        })
    })
}

/// The facade accepted the Sandbox handshake of the Agent on top (after `Handshake`).
#[napi]
pub fn agent_handshake_done(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.agent_handshake_done(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

#[napi]
pub fn withdraw_agent(domain: u32, task: u32) -> Result<bool> {
    guard(|| registry::with(domain, |d| Ok(d.scheduler().withdraw(task))))
}

/// Abort: every queued task, in queue order.
#[napi]
pub fn drain_agent_queue(domain: u32) -> Result<Vec<u32>> {
    guard(|| registry::with(domain, |d| Ok(d.scheduler().drain())))
}
