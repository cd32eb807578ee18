//! Post-order completion of capture frames: a `<System>` or `<FollowUp>` hands its trimmed
//! text to the Agent plan; an `<Agent>` validates its plan (provider, turns, call budget) and
//! asks the driver to run it; the driver's result lands in the parent channel.

use crate::capture::{AgentPlan, Capture, PlanState};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::js_text::js_trim;
use crate::shared::Shared;
use crate::step::{Op, Step};
use crate::task::Task;
use crate::trace::AttrValue;

impl Task {
    /// The capture frame on top finished collecting. `Ok(Some(op))` stops the advance loop.
    pub(crate) fn complete_capture(&mut self, sh: &mut Shared) -> Result<Option<Op>, EvalError> {
        let top = self.frames.len() - 1;
        let Frame::Capture { capture, .. } = &mut self.frames[top] else {
            return Err(EvalError::Invariant("AML capture index is out of step"));
        };
        match capture {
            Capture::Agent(plan) => {
                if !plan.has_provider {
                    return Err(EvalError::NoProvider(plan.span_id));
                }
                if plan.sandboxed {
                    plan.state = PlanState::Handshake;
                    return Ok(Some(Op::Handshake));
                }
                finalize_plan(plan, sh)?;
                Ok(Some(Op::Agent))
            }
            Capture::System { buffer } => {
                let text = js_trim(buffer).to_string();
                if text.is_empty() {
                    return Err(EvalError::EmptyContent("System"));
                }
                let Some(Frame::Capture { span, .. }) = self.pop_frame() else {
                    unreachable!("top frame is a capture")
                };
                if let Some(span) = span {
                    let content = vec![("content".into(), AttrValue::Text(text.clone()))];
                    sh.tracer.close(span, None, vec![], content);
                }
                let plan = self
                    .nearest_plan()
                    .ok_or(EvalError::OnlyInsideAgent("System"))?;
                plan.grants_mut().systems.push(text);
                Ok(None)
            }
            Capture::FollowUp { buffer } => {
                let text = js_trim(buffer).to_string();
                if text.is_empty() {
                    return Err(EvalError::EmptyContent("FollowUp"));
                }
                self.pop_frame();
                let plan = self
                    .nearest_plan()
                    .ok_or(EvalError::OnlyInsideAgent("FollowUp"))?;
                plan.grants_mut().follow_ups.push(text);
                Ok(None)
            }
        }
    }

    /// The plan of the Agent on top, once it is ready to run.
    pub(crate) fn ready_plan(&self) -> Option<&AgentPlan> {
        match self.frames.last() {
            Some(Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            }) if plan.state == PlanState::Ready => Some(plan),
            _ => None,
        }
    }

    /// [`Task::ready_plan`], to record what the provider answered with (its usage).
    pub(crate) fn ready_plan_mut(&mut self) -> Option<&mut AgentPlan> {
        match self.frames.last_mut() {
            Some(Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            }) if plan.state == PlanState::Ready => Some(plan),
            _ => None,
        }
    }

    /// The facade accepted the Sandbox handshake of the Agent on top: apply the turn and
    /// call budgets and ask for the provider run.
    pub(crate) fn agent_handshake_done(&mut self, sh: &mut Shared) -> Step {
        let top = self.frames.len().saturating_sub(1);
        let result = match self.frames.get_mut(top) {
            Some(Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            }) if plan.state == PlanState::Handshake => finalize_plan(plan, sh),
            _ => Err(EvalError::Invariant(
                "AML Agent handshake completed out of lifecycle order",
            )),
        };
        match result {
            Ok(()) => self.step(Op::Agent, sh),
            Err(e) => self.reject(e, sh),
        }
    }

    /// The provider answered: close the Agent span, put `text` where the Agent stood.
    /// `output` is the sensitive `output` attribute (the text, or structured JSON).
    pub(crate) fn agent_done(&mut self, text: &str, output: &str, sh: &mut Shared) -> Step {
        if self.ready_plan().is_none() {
            return self.reject(
                EvalError::Invariant("AML Agent completed out of lifecycle order"),
                sh,
            );
        }
        let Some(Frame::Capture {
            capture: Capture::Agent(plan),
            span,
            ..
        }) = self.pop_frame()
        else {
            unreachable!("ready_plan checked the top frame")
        };
        // Reported usage counts before anything else: the budget sees it even if the span
        // is not traced. A bad value fails the Agent instead of being summed.
        let usage = match plan.usage.as_deref() {
            None => None,
            Some(Err(bad)) => return self.reject(EvalError::BadUsage(plan.span_id, *bad), sh),
            Some(Ok(usage)) => Some(*usage),
        };
        if let Some(usage) = &usage {
            sh.usage.add(usage);
            sh.tokens = sh.tokens.saturating_add(usage.counted());
        }
        // Untraced, closing records nothing (Tracer::close): the attributes are not built.
        if let Some(span) = span.filter(|_| sh.tracer.enabled()) {
            let mut attributes = vec![
                (
                    "provider".into(),
                    AttrValue::Text(plan.provider.clone().unwrap_or_default()),
                ),
                ("tools".into(), AttrValue::Number(plan.tools().len() as f64)),
                (
                    "mcpServers".into(),
                    AttrValue::Number(plan.mcp().len() as f64),
                ),
                ("turns".into(), AttrValue::Number(plan.turns() as f64)),
            ];
            if let Some(model) = &plan.model {
                attributes.push(("model".into(), AttrValue::Text(model.clone())));
            }
            if plan.replayed {
                attributes.push(("journal.replayed".into(), AttrValue::Bool(true)));
            }
            if let Some(usage) = usage {
                attributes.push(("usage".into(), AttrValue::Usage(usage)));
                sh.tracer.add_usage(span.id, &usage);
            }
            // Content is copied only for a consumer that consents to it (Tracer::set_content).
            let sensitive = if sh.tracer.wants_content() {
                vec![
                    ("prompt".into(), AttrValue::Text(plan.prompt().to_string())),
                    ("system".into(), AttrValue::Text(plan.system())),
                    ("output".into(), AttrValue::Text(output.to_string())),
                ]
            } else {
                Vec::new()
            };
            sh.tracer.close(span, None, attributes, sensitive);
        }
        if let Some(error) = tokens_exhausted(plan.span_id, sh) {
            return self.reject(error, sh);
        }
        match self.append(text, true) {
            Ok(()) => self.advance(sh),
            Err(e) => self.reject(e, sh),
        }
    }
}

/// The budget checks, in the documented order (after the provider and Sandbox checks), then
/// the call reservation.
fn finalize_plan(plan: &mut AgentPlan, sh: &mut Shared) -> Result<(), EvalError> {
    let max_turns = sh.limits.max_turns_per_agent;
    if max_turns != 0 && plan.turns() > max_turns {
        return Err(EvalError::MaxTurns(plan.span_id, max_turns));
    }
    let max_calls = sh.limits.max_agent_calls;
    if max_calls != 0 && sh.agent_calls >= max_calls {
        return Err(EvalError::MaxAgentCalls(max_calls, plan.span_id));
    }
    if let Some(error) = tokens_exhausted(plan.span_id, sh) {
        return Err(error);
    }
    sh.agent_calls += 1;
    plan.state = PlanState::Ready;
    for tool in plan.tools() {
        sh.tracer.point(
            plan.span_id,
            Some(plan.parent_span),
            "capability.tool".into(),
            vec![
                ("kind".into(), AttrValue::Text("javascript".into())),
                ("name".into(), AttrValue::Text(tool.name.clone())),
            ],
            vec![],
        );
    }
    // Only the kind and name: transport configuration (headers, env) never reaches a trace.
    for server in plan.mcp() {
        sh.tracer.point(
            plan.span_id,
            Some(plan.parent_span),
            "capability.mcp".into(),
            vec![
                ("kind".into(), AttrValue::Text(server.kind.as_str().into())),
                ("name".into(), AttrValue::Text(server.name.clone())),
            ],
            vec![],
        );
    }
    Ok(())
}

/// `maxTokens` (issue 37): once the reported usage reaches the budget, the Agent that reached
/// it fails the evaluation and no later Agent starts a provider call. `0` is no budget.
fn tokens_exhausted(agent: crate::SpanId, sh: &Shared) -> Option<EvalError> {
    let max = sh.limits.max_tokens;
    (max != 0 && sh.tokens >= max).then_some(EvalError::MaxTokens(max, agent, sh.tokens))
}

impl Step {
    /// Convenience for tests and drivers: is this the given op?
    pub fn is(self, op: Op) -> bool {
        self.op == op
    }
}
