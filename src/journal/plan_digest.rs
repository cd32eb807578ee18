//! The request digest of a ready Agent (docs/JOURNAL.md, "Replay and divergence"): the
//! plan's parts the engine holds, framed and hashed by `aml_journal::agent_digest_raw`. One
//! rule for the journaled lookup (`src/hot_path/journal.rs`) and the recording-only path
//! (`src/hot_path/recorded_steps.rs`), so an entry one records is found by the other.

use aml_engine::Domain;
use aml_journal::AgentRequest;
use napi::Result;

use crate::boundary::guard::engine_error;

/// The request digest of the ready Agent on top of `task` (`extra`: what only JS holds).
pub(crate) fn plan_digest(domain: &mut Domain, task: u32, extra: &str) -> Result<[u8; 32]> {
    let plan = domain.agent_plan(task).map_err(engine_error)?;
    let system = plan.system();
    let tools: Vec<&str> = plan.tools().iter().map(|t| t.name.as_str()).collect();
    let mcp_servers: Vec<&str> = plan.mcp().iter().map(|m| m.name.as_str()).collect();
    let skills: Vec<&str> = plan.skills().iter().map(|s| s.name.as_str()).collect();
    Ok(aml_journal::agent_digest_raw(&AgentRequest {
        provider: plan.provider_name(),
        model: plan.model(),
        prompt: plan.prompt(),
        system: &system,
        follow_ups: plan.follow_ups(),
        tools: &tools,
        mcp_servers: &mcp_servers,
        skills: &skills,
        extra,
    }))
}
