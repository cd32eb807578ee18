//! The primitive protocols of a domain: rejecting a primitive, scope frames (Sandbox,
//! Script…), Skills, transparent wrappers, and the Agent protocol (entering Agent, System
//! and FollowUp, capability grants, the ready plan, the Sandbox handshake, the result).
//! Each forwards to the task on which the primitive stands.

use crate::agent::AgentEntry;
use crate::capture::SkillGrant;
use crate::capture::{AgentPlan, McpKind};
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::scope::ScopeEntry;
use crate::step::Step;
use crate::trace::Attributes;
use crate::usage::{BadUsage, Reported, Usage};

impl Domain {
    /// The driver rejected the primitive on top with an engine-known error.
    pub fn reject(&mut self, id: TaskId, error: EvalError) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.reject(error, sh))
    }

    pub fn enter_scope(&mut self, id: TaskId, entry: ScopeEntry) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_scope(entry, sh))
    }

    /// `(spanId, captured input)` of the scope on top, after [`crate::Op::Complete`].
    pub fn scope_input(&mut self, id: TaskId) -> Result<(String, Option<String>), EvalError> {
        let (span, input) = self.task(id)?.scope_input()?;
        Ok((span, input.map(str::to_string)))
    }

    pub fn scope_done(
        &mut self,
        id: TaskId,
        output: &str,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.scope_done(output, attributes, sensitive, sh))
    }

    /// Enters the `<Skill>` on top of `id` as a capture scope (placement checked here).
    pub fn enter_skill(
        &mut self,
        id: TaskId,
        name: String,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_skill(name, attributes, sensitive, sh))
    }

    /// Completes the `<Skill>` on top: registers `package` with the nearest Agent plan, then
    /// closes the span and appends `output` to the surrounding channel.
    pub fn skill_done(
        &mut self,
        id: TaskId,
        output: &str,
        package: Option<SkillGrant>,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| {
            t.skill_done(output, package, attributes, sensitive, sh)
        })
    }

    pub fn enter_transparent(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_transparent(sh))
    }

    pub fn enter_agent(&mut self, id: TaskId, entry: AgentEntry) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_agent(entry, sh))
    }

    pub fn enter_system(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_system(sh))
    }

    pub fn enter_follow_up(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.enter_follow_up(sh))
    }

    pub fn grant_tool(
        &mut self,
        id: TaskId,
        name: &str,
        reference: u32,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.grant_tool(name, reference, sh))
    }

    /// Grants an MCP server, by provider-native name or descriptor `kind`, to the nearest
    /// Agent plan; `reference` is the facade's handle for the provider-facing entry.
    pub fn grant_mcp(
        &mut self,
        id: TaskId,
        name: &str,
        kind: McpKind,
        reference: u32,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.grant_mcp(name, kind, reference, sh))
    }

    /// The plan of the Agent on top of `id`, after [`crate::Op::Agent`].
    pub fn agent_plan(&mut self, id: TaskId) -> Result<&AgentPlan, EvalError> {
        self.task(id)?
            .ready_plan()
            .ok_or(EvalError::Invariant("AML Agent plan is not ready"))
    }

    /// The facade accepted the Sandbox handshake after [`crate::Op::Handshake`].
    pub fn agent_handshake_done(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.agent_handshake_done(sh))
    }

    /// The provider's answer for the Agent on top of `id` carried `usage` (issue 37): `None` is
    /// a usage that is not an object. Validated now, applied by the following
    /// [`Domain::agent_done`], which rejects the task on a bad value.
    ///
    /// Returns the `maxTokens` error that `agent_done` will reject with when this usage
    /// reaches the budget, so the driver can stop the rest of the evaluation (cancel running
    /// calls, drop queued ones) with that error before landing the answer.
    pub fn agent_usage(
        &mut self,
        id: TaskId,
        reported: Option<[Reported; 5]>,
    ) -> Result<Option<EvalError>, EvalError> {
        let (tokens, max) = (self.tokens(), self.limits().max_tokens);
        let plan = self
            .task(id)?
            .ready_plan_mut()
            .ok_or(EvalError::Invariant("AML Agent plan is not ready"))?;
        let usage = match reported {
            Some(values) => Usage::from_reported(values),
            None => Err(BadUsage(None)),
        };
        let reached = match &usage {
            Ok(usage) if max != 0 => {
                let after = tokens.saturating_add(usage.counted());
                (after >= max).then_some(EvalError::MaxTokens(max, plan.span_id, after))
            }
            _ => None,
        };
        plan.usage = Some(Box::new(usage));
        Ok(reached)
    }

    pub fn agent_done(&mut self, id: TaskId, text: &str, output: &str) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.agent_done(text, output, sh))
    }
}
