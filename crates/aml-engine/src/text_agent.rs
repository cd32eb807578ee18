//! A text-only `<Agent>` evaluated as a task of its own — `evaluate(<Agent>prompt</Agent>)`
//! from a component, the fan-out shape. The facade's driver would cross into the engine
//! five times for it (node, Agent protocol, its one text child, the plan, then the result
//! and the task's output); here each half is one call. The steps are exactly the driver's:
//! a step other than the expected one ends the sequence and is handed back, and the facade
//! treats it as its driver would (in practice an error: depth, placement, budgets).

use crate::agent::AgentEntry;
use crate::capture::AgentPlan;
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::identity::Identity;
use crate::primitive::NodeKind;
use crate::primitive::Primitive;
use crate::step::{Op, Step};

/// How entering a text-only Agent ended.
pub enum TextAgentStart<'a> {
    /// The Agent is ready to run (the driver's [`Op::Agent`]): its plan.
    Ready(&'a AgentPlan),
    /// A step other than the expected one; the task is left as that step left it.
    Stopped(Step),
}

impl Domain {
    /// Enters the Agent node `identity` on the fresh task `id`, the Agent protocol with
    /// `entry`, and `prompt` as its only child.
    pub fn enter_text_agent(
        &mut self,
        id: TaskId,
        identity: Identity,
        entry: AgentEntry,
        prompt: &str,
    ) -> Result<TextAgentStart<'_>, EvalError> {
        let step = self.node(
            id,
            identity,
            NodeKind::Primitive(Primitive::Agent as u8),
            "",
        )?;
        if step.op != Op::Primitive {
            return Ok(TextAgentStart::Stopped(step));
        }
        let step = self.enter_agent(id, entry)?;
        if step.op != Op::Children {
            return Ok(TextAgentStart::Stopped(step));
        }
        let step = self.text(id, prompt)?;
        if step.op != Op::Agent {
            return Ok(TextAgentStart::Stopped(step));
        }
        self.agent_plan(id).map(TextAgentStart::Ready)
    }

    /// The result of the text-only Agent entered by [`Domain::enter_text_agent`]: lands
    /// `text` (and the trace `output`). When that completes the task ([`Op::Done`]), the
    /// task is released: its output is `text` itself, which the caller already holds.
    /// Otherwise the task stays live. Returns the step either way.
    pub fn finish_text_agent(
        &mut self,
        id: TaskId,
        text: &str,
        output: &str,
    ) -> Result<Step, EvalError> {
        let step = self.agent_done(id, text, output)?;
        if step.op == Op::Done {
            let landed = self.finish(id)?;
            debug_assert_eq!(landed, text);
        }
        Ok(step)
    }
}
