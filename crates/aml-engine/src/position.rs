//! Structural positions for the evaluation journal (docs/JOURNAL.md). Only a journaled
//! evaluation asks for them, so an ordinary run pays nothing.
//!
//! A task's position is the shape of its frame stack, bottom to top: which element of each
//! array (its index from the start), and the kind of every node, scope and capture frame. It names "where in the tree"
//! without span ids or identities, which depend on timing and object allocation. The facade
//! prefixes it with the task's origin (the caller's position and the ordinal of the nested
//! `evaluate()`, Parallel branch or Loop iteration) to make it unique in the evaluation.

use std::fmt::Write;

use crate::capture::Capture;
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::task::{NodeKind, Task};

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

impl Domain {
    /// The structural position of `id`'s top frame (see the module comment).
    pub fn position(&mut self, id: TaskId) -> Result<String, EvalError> {
        Ok(self.task(id)?.position())
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
    fn appending_a_sibling_keeps_earlier_positions() {
        let two = agent_positions(2);
        let three = agent_positions(3);
        assert_eq!(two[..], three[..2]);
    }
}
