//! The Agent half of `NativeEvaluation`: entering Agent/System/FollowUp, Tool grants, the
//! ready plan, the provider result, and the per-domain scheduler.

use aml_engine::AgentEntry;
use napi::Result;
use napi_derive::napi;

use crate::evaluation::NativeEvaluation;
use crate::guard::{engine_error, guard};

#[napi]
impl NativeEvaluation {
    #[napi]
    pub fn enter_agent(
        &mut self,
        task: u32,
        has_provider: bool,
        provider: Option<String>,
        model: Option<String>,
        system: Option<String>,
    ) -> Result<u32> {
        let entry = AgentEntry {
            has_provider,
            provider,
            model,
            system,
        };
        guard(|| {
            self.domain()
                .enter_agent(task, entry)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn enter_system(&mut self, task: u32) -> Result<u32> {
        guard(|| {
            self.domain()
                .enter_system(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn enter_follow_up(&mut self, task: u32) -> Result<u32> {
        guard(|| {
            self.domain()
                .enter_follow_up(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    /// `reference` is the facade's index of the tool object in its per-domain table.
    #[napi]
    pub fn grant_tool(&mut self, task: u32, name: String, reference: u32) -> Result<u32> {
        guard(|| {
            self.domain()
                .grant_tool(task, &name, reference)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    /// `[spanId, parentSpanId, prompt, system, ...followUps]` of the ready Agent on top.
    #[napi]
    pub fn agent_plan(&mut self, task: u32) -> Result<Vec<String>> {
        guard(|| {
            let plan = self.domain().agent_plan(task).map_err(engine_error)?;
            let mut out = Vec::with_capacity(4 + plan.follow_ups.len());
            out.push(plan.span_id.to_string());
            out.push(plan.parent_span.to_string());
            out.push(plan.prompt().to_string());
            out.push(plan.system());
            out.extend(plan.follow_ups.iter().cloned());
            Ok(out)
        })
    }

    /// Tool references granted to the ready Agent on top, in grant order.
    #[napi]
    pub fn agent_tools(&mut self, task: u32) -> Result<Vec<u32>> {
        guard(|| {
            let plan = self.domain().agent_plan(task).map_err(engine_error)?;
            Ok(plan.tools.iter().map(|t| t.reference).collect())
        })
    }

    #[napi]
    pub fn agent_done(&mut self, task: u32, text: String, output: String) -> Result<u32> {
        guard(|| {
            self.domain()
                .agent_done(task, &text, &output)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    /// True when `task` holds a provider slot now; false when it was queued.
    #[napi]
    pub fn schedule_agent(&mut self, task: u32) -> bool {
        self.domain().scheduler().request(task)
    }

    /// Releases a slot; returns the queued task that now holds it, or -1.
    #[napi]
    pub fn release_agent_slot(&mut self) -> i64 {
        self.domain().scheduler().release().map_or(-1, i64::from)
    }

    #[napi]
    pub fn withdraw_agent(&mut self, task: u32) -> bool {
        self.domain().scheduler().withdraw(task)
    }

    /// Abort: every queued task, in queue order.
    #[napi]
    pub fn drain_agent_queue(&mut self) -> Vec<u32> {
        self.domain().scheduler().drain()
    }
}
