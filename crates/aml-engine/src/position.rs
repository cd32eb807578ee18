//! Structural positions for the evaluation journal (docs/JOURNAL.md). Only a journaled
//! evaluation asks for them, so an ordinary run pays nothing.
//!
//! A task's position is the shape of its frame stack, bottom to top: which element of each
//! array (its index from the start), and the kind of every node, scope and capture frame. It names "where in the tree"
//! without span ids or identities, which depend on timing and object allocation. Once
//! [`Domain::enable_positions`] ran, every new task records its origin (the creating task's
//! position and the ordinal of that creation there: the nth nested `evaluate()`, Parallel
//! branch or Loop iteration), which prefixes its positions to make them unique in the
//! evaluation.

use std::collections::HashMap;
use std::fmt::Write;

use crate::capture::{AgentPlan, Capture};
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::step::Step;
use crate::task::{NodeKind, Task};
use crate::trace::AttrValue;

impl AgentPlan {
    /// The provider's name (the Agent's span attribute; a journal digest part).
    pub fn provider_name(&self) -> &str {
        self.provider.as_deref().unwrap_or("")
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

impl Task {
    pub(crate) fn position(&self) -> String {
        let mut out = String::with_capacity(self.frames.len() * 4);
        for frame in &self.frames {
            // Writing to a String cannot fail.
            let _ = match frame {
                // The element being read is the last one requested: counted from the start,
                // so appending siblings after a step keeps its position.
                Frame::Array { remaining, len, .. } => write!(out, "a{}.", len - remaining),
                Frame::Node {
                    kind: NodeKind::Component,
                    ..
                } => write!(out, "c."),
                Frame::Node {
                    kind: NodeKind::Primitive(code),
                    ..
                } => write!(out, "p{code}."),
                Frame::Scope { .. } => write!(out, "s."),
                Frame::Capture { capture, .. } => match capture {
                    Capture::Agent(_) => write!(out, "A."),
                    _ => write!(out, "k."),
                },
            };
        }
        out
    }
}

/// The origins and creation ordinals of one journaled evaluation.
#[derive(Debug, Default)]
pub(crate) struct Positions {
    /// By task id: the task's origin prefix. Ids are reused: every creation overwrites it.
    origins: Vec<String>,
    /// `<position><tag>` → how many tasks (`e`) or Tool calls (`t`) it created so far.
    ordinals: HashMap<String, u32>,
}

impl Domain {
    /// Journaled evaluations only: from now on every new task records its origin.
    pub fn enable_positions(&mut self) {
        self.positions.get_or_insert_with(Box::default);
    }

    /// Called by `new_task` once positions are enabled.
    pub(crate) fn note_origin(&mut self, id: TaskId, parent: Option<TaskId>) {
        let origin = match parent {
            None => String::new(),
            Some(parent) => match self.next_ordinal(parent, 'e') {
                Ok(mut at) => {
                    at.push('/');
                    at
                }
                // new_task already checked the parent.
                Err(_) => String::new(),
            },
        };
        let Some(positions) = self.positions.as_deref_mut() else {
            return;
        };
        let slot = id as usize;
        if positions.origins.len() <= slot {
            positions.origins.resize_with(slot + 1, String::new);
        }
        positions.origins[slot] = origin;
    }

    /// The unique position of `id`'s top frame: its origin, then its frame stack.
    pub fn position(&mut self, id: TaskId) -> Result<String, EvalError> {
        let frames = self.task(id)?.position();
        let origin = self
            .positions
            .as_deref()
            .and_then(|p| p.origins.get(id as usize))
            .map_or("", String::as_str);
        let mut out = String::with_capacity(origin.len() + frames.len());
        out.push_str(origin);
        out.push_str(&frames);
        Ok(out)
    }

    /// `<position of id><tag><n>`: the nth creation of kind `tag` from `id`'s position.
    fn next_ordinal(&mut self, id: TaskId, tag: char) -> Result<String, EvalError> {
        let mut at = self.position(id)?;
        at.push(tag);
        let positions = self.positions.get_or_insert_with(Box::default);
        let n = match positions.ordinals.get_mut(&at) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => {
                positions.ordinals.insert(at.clone(), 1);
                0
            }
        };
        let _ = write!(at, "{n}");
        Ok(at)
    }

    /// The journal key of the ready Agent on top of `id`.
    pub fn agent_key(&mut self, id: TaskId) -> Result<String, EvalError> {
        Ok(format!("agent:{}", self.position(id)?))
    }

    /// The journal key of the next callable-Tool call from the component on top of `id`.
    pub fn tool_key(&mut self, id: TaskId) -> Result<String, EvalError> {
        Ok(format!("tool:{}", self.next_ordinal(id, 't')?))
    }

    /// Marks the ready Agent on top of `id` as answered from the journal.
    pub fn mark_replayed(&mut self, id: TaskId) -> Result<(), EvalError> {
        let task = self.task(id)?;
        match task.frames.last_mut() {
            Some(Frame::Capture {
                capture: Capture::Agent(plan),
                ..
            }) => {
                plan.replayed = true;
                Ok(())
            }
            _ => Err(EvalError::Invariant("AML Agent plan is not ready")),
        }
    }
}

impl Domain {
    /// Answers the ready Agent on top of `id` with `text` recorded at journal `key`, as the
    /// facade's replay does: a `journal.replay` point event on the Agent span (only built
    /// while tracing), then the Agent completes and its span ends with `journal.replayed`.
    pub fn replay_agent(&mut self, id: TaskId, key: &str, text: &str) -> Result<Step, EvalError> {
        self.mark_replayed(id)?;
        let (_, shared) = self.parts(id)?;
        if shared.tracer.enabled() {
            let plan = self.agent_plan(id)?;
            let (span, parent) = (plan.span_id, plan.parent_span);
            let attributes = vec![
                ("key".to_string(), AttrValue::Text(key.to_string())),
                ("kind".to_string(), AttrValue::Text("agent".to_string())),
            ];
            self.point(
                span,
                Some(parent),
                "journal.replay".into(),
                attributes,
                vec![],
            );
        }
        self.agent_done(id, text, text)
    }
}

#[cfg(test)]
mod tests {
    use crate::{AgentEntry, Domain, Limits, NodeKind, Op, Primitive};

    fn agent_entry() -> AgentEntry {
        AgentEntry {
            has_provider: true,
            provider: Some("p".into()),
            ..AgentEntry::default()
        }
    }

    #[test]
    fn sibling_agents_have_distinct_stable_positions() {
        let mut positions = Vec::new();
        for _ in 0..2 {
            let mut d = Domain::new(Limits::default());
            d.open_root();
            let t = d.new_task(None).unwrap();
            d.array(t, 1, 2).unwrap();
            let mut run = Vec::new();
            for identity in [2, 3] {
                d.node(
                    t,
                    identity,
                    NodeKind::Primitive(Primitive::Agent as u8),
                    "Agent",
                )
                .unwrap();
                let step = d.enter_agent(t, agent_entry()).unwrap();
                assert!(step.is(Op::Children));
                run.push(d.position(t).unwrap());
                d.empty(t).unwrap();
                d.mark_replayed(t).unwrap();
                d.agent_done(t, "x", "").unwrap();
            }
            positions.push(run);
        }
        assert_ne!(positions[0][0], positions[0][1]);
        assert_eq!(positions[0], positions[1]);
    }

    /// The positions of the Agents of a root array of `len` Agents.
    fn agent_positions(len: u32) -> Vec<String> {
        let mut d = Domain::new(Limits::default());
        d.open_root();
        let t = d.new_task(None).unwrap();
        d.array(t, 1, len).unwrap();
        let mut out = Vec::new();
        for identity in 0..len {
            d.node(
                t,
                10 + u64::from(identity),
                NodeKind::Primitive(Primitive::Agent as u8),
                "Agent",
            )
            .unwrap();
            d.enter_agent(t, agent_entry()).unwrap();
            out.push(d.position(t).unwrap());
            d.empty(t).unwrap();
            d.agent_done(t, "x", "").unwrap();
        }
        out
    }

    #[test]
    fn nested_tasks_are_prefixed_by_their_origin_and_ordinal() {
        let mut d = Domain::new(Limits::default());
        d.enable_positions();
        d.open_root();
        let root = d.new_task(None).unwrap();
        d.node(root, 2, NodeKind::Component, "Fan").unwrap();
        let first = d.new_task(Some(root)).unwrap();
        let second = d.new_task(Some(root)).unwrap();
        assert_eq!(d.position(first).unwrap(), "c.e0/");
        assert_eq!(d.position(second).unwrap(), "c.e1/");
        assert_eq!(d.tool_key(root).unwrap(), "tool:c.t0");
        assert_eq!(d.tool_key(root).unwrap(), "tool:c.t1");
        d.node(
            second,
            4,
            NodeKind::Primitive(Primitive::Agent as u8),
            "Agent",
        )
        .unwrap();
        d.enter_agent(second, agent_entry()).unwrap();
        assert_eq!(d.agent_key(second).unwrap(), "agent:c.e1/A.");
    }

    #[test]
    fn a_replayed_agent_completes_with_its_recorded_text() {
        let mut d = Domain::new(Limits::default());
        d.set_tracing(true);
        d.open_root();
        let t = d.new_task(None).unwrap();
        d.node(t, 2, NodeKind::Primitive(Primitive::Agent as u8), "Agent")
            .unwrap();
        d.enter_agent(t, agent_entry()).unwrap();
        d.text(t, "hi").unwrap();
        let step = d.empty(t);
        assert!(step.is_ok());
        let step = d.replay_agent(t, "agent:A.", "recorded").unwrap();
        assert!(step.is(Op::Done));
        assert_eq!(d.finish(t).unwrap(), "recorded");
        let records = format!("{:?}", d.drain_trace());
        assert!(records.contains("journal.replay"), "{records}");
        assert!(records.contains("journal.replayed"), "{records}");
    }

    #[test]
    fn appending_a_sibling_keeps_earlier_positions() {
        let two = agent_positions(2);
        let three = agent_positions(3);
        assert_eq!(two[..], three[..2]);
    }
}
