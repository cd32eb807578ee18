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

use crate::capture::{AgentPlan, Capture};
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::journal_tables::{JournalStep, Positions, SparePositions};
use crate::primitive::NodeKind;
use crate::span_id::SpanId;
use crate::step::Step;
use crate::task::Task;

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
    /// Appends this task's frame stack to `out`. Written byte by byte: this runs once per
    /// journaled Agent, and the formatting machinery cost more than the text itself.
    fn write_position(&self, out: &mut String) {
        for frame in &self.frames {
            match frame {
                // The element being read is the last one requested: counted from the start,
                // so appending siblings after a step keeps its position.
                Frame::Array { remaining, len, .. } => {
                    out.push('a');
                    out.push_str(itoa::Buffer::new().format(len - remaining));
                }
                Frame::Node {
                    kind: NodeKind::Component,
                    ..
                } => out.push('c'),
                Frame::Node {
                    kind: NodeKind::Primitive(code),
                    ..
                } => {
                    out.push('p');
                    out.push_str(itoa::Buffer::new().format(*code));
                }
                Frame::Scope { .. } => out.push('s'),
                Frame::Capture { capture, .. } => out.push(match capture {
                    Capture::Agent(_) => 'A',
                    _ => 'k',
                }),
            }
            out.push('.');
        }
    }
}

impl Domain {
    /// Journaled evaluations only: from now on every new task records its origin.
    pub fn enable_positions(&mut self) {
        self.positions.get_or_insert_with(Box::default);
    }

    /// [`Domain::enable_positions`] with the tables of an earlier evaluation.
    pub fn enable_positions_reusing(&mut self, spare: SparePositions) {
        if self.positions.is_none() {
            self.positions = Some(spare.0);
        }
    }

    /// This evaluation's position tables, emptied for reuse (None when it had none).
    pub fn take_positions(&mut self) -> Option<SparePositions> {
        let mut positions = self.positions.take()?;
        for origin in &mut positions.origins {
            origin.clear();
        }
        for step in &mut positions.steps {
            step.live = false;
            step.key.clear();
        }
        positions.ordinals.clear();
        positions.recording = None;
        Some(SparePositions(positions))
    }

    /// Called by `new_task` once positions are enabled.
    pub(crate) fn note_origin(&mut self, id: TaskId, parent: Option<TaskId>) {
        let Some(mut positions) = self.positions.take() else {
            return;
        };
        let slot = id as usize;
        if positions.origins.len() <= slot {
            positions.origins.resize_with(slot + 1, String::new);
        }
        let mut origin = std::mem::take(&mut positions.origins[slot]);
        origin.clear();
        if let Some(parent) = parent {
            // new_task already checked the parent.
            if self
                .next_ordinal(&mut positions, parent, 'e', &mut origin)
                .is_ok()
            {
                origin.push('/');
            } else {
                origin.clear();
            }
        }
        positions.origins[slot] = origin;
        self.positions = Some(positions);
    }

    /// Appends the unique position of `id`'s top frame to `out`: its origin, then its frame
    /// stack.
    fn write_position(
        &self,
        positions: Option<&Positions>,
        id: TaskId,
        out: &mut String,
    ) -> Result<(), EvalError> {
        let task = self.task_ref(id)?;
        if let Some(origin) = positions.and_then(|p| p.origins.get(id as usize)) {
            out.push_str(origin);
        }
        task.write_position(out);
        Ok(())
    }

    /// The unique position of `id`'s top frame: its origin, then its frame stack.
    pub fn position(&mut self, id: TaskId) -> Result<String, EvalError> {
        let mut out = String::new();
        self.write_position(self.positions.as_deref(), id, &mut out)?;
        Ok(out)
    }

    /// Appends `<position of id><tag><n>` to `out`: the nth creation of kind `tag` from
    /// `id`'s position. `positions` is taken out of the domain by the caller.
    fn next_ordinal(
        &self,
        positions: &mut Positions,
        id: TaskId,
        tag: char,
        out: &mut String,
    ) -> Result<(), EvalError> {
        let mut at = std::mem::take(&mut positions.scratch);
        at.clear();
        let written = self.write_position(Some(positions), id, &mut at);
        if let Err(error) = written {
            positions.scratch = at;
            return Err(error);
        }
        at.push(tag);
        let n = match positions.ordinals.get_mut(at.as_str()) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => {
                positions.ordinals.insert(at.clone(), 1);
                0
            }
        };
        out.push_str(&at);
        out.push_str(itoa::Buffer::new().format(n));
        positions.scratch = at;
        Ok(())
    }

    /// The journal key of the next callable-Tool call from the component on top of `id`.
    pub fn tool_key(&mut self, id: TaskId) -> Result<String, EvalError> {
        let mut positions = self.positions.take().unwrap_or_default();
        let mut key = String::from("tool:");
        let written = self.next_ordinal(&mut positions, id, 't', &mut key);
        self.positions = Some(positions);
        written.map(|()| key)
    }

    /// The pending journal step of `id` (created empty), with the Agent's key written into
    /// its reused buffer: what a journaled Agent's lookup fills in (`JournalStep`). Hand
    /// it back with [`Domain::put_journal_step`].
    pub fn take_journal_step(&mut self, id: TaskId) -> Result<JournalStep, EvalError> {
        let positions = self.positions.get_or_insert_with(Box::default);
        let slot = id as usize;
        if positions.steps.len() <= slot {
            positions.steps.resize_with(slot + 1, JournalStep::default);
        }
        let mut step = std::mem::take(&mut positions.steps[slot]);
        step.live = false;
        step.span = None;
        step.key.clear();
        step.key.push_str("agent:");
        if let Err(error) = self.write_position(self.positions.as_deref(), id, &mut step.key) {
            self.put_journal_step(id, step);
            return Err(error);
        }
        Ok(step)
    }

    /// Files `step` back as `id`'s pending journal step.
    pub fn put_journal_step(&mut self, id: TaskId, step: JournalStep) {
        if let Some(slot) = self
            .positions
            .as_deref_mut()
            .and_then(|p| p.steps.get_mut(id as usize))
        {
            *slot = step;
        }
    }

    /// The live pending journal step of `id`, if its Agent's lookup left one.
    pub fn journal_step(&self, id: TaskId) -> Option<&JournalStep> {
        self.positions
            .as_deref()
            .and_then(|p| p.steps.get(id as usize))
            .filter(|step| step.live)
    }

    /// Clears `id`'s pending journal step (its Agent was recorded, or failed).
    pub fn end_journal_step(&mut self, id: TaskId) {
        if let Some(step) = self
            .positions
            .as_deref_mut()
            .and_then(|p| p.steps.get_mut(id as usize))
        {
            step.live = false;
        }
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
    /// Marks the ready Agent on top of `id` as a journal step that will run and be recorded
    /// at `key`: a `journal.step` point event on its span (only built while tracing), so a
    /// run's record can name the step to re-run from (docs/STUDIO.md, `aml run --from`).
    pub fn note_live_step(&mut self, id: TaskId, key: &str) -> Result<(), EvalError> {
        self.journal_point(id, "journal.step", key)?;
        Ok(())
    }

    /// A recording-only evaluation (an empty built-in journal: nothing can replay, docs/JOURNAL.md
    /// "Cost"): its one-call text Agents take the plain path and the binding records them
    /// into the journal index `index` (an opaque handle here) as they start and land.
    pub fn record_steps_into(&mut self, index: u32) {
        self.positions.get_or_insert_with(Box::default).recording = Some(index);
    }

    /// The journal index of a recording-only evaluation ([`Domain::record_steps_into`]).
    pub fn recording_index(&self) -> Option<u32> {
        self.positions.as_deref().and_then(|p| p.recording)
    }

    /// Makes the `journal.step` points of this evaluation the run recorder's alone: its
    /// journal is the one `aml run` keeps for the recorder, not one the user asked for, so
    /// the user's trace listeners (`--trace`) see what an unrecorded run shows them.
    pub fn set_private_steps(&mut self, private: bool) {
        self.private_steps = private;
    }

    /// Whether the `journal.step` points are the run recorder's alone.
    pub fn private_steps(&self) -> bool {
        self.private_steps
    }
}

impl Domain {
    /// Answers the ready Agent on top of `id` with `text` recorded at journal `key`, as the
    /// facade's replay does: a `journal.replay` point event on the Agent span (only built
    /// while tracing), then the Agent completes and its span ends with `journal.replayed`.
    pub fn replay_agent(&mut self, id: TaskId, key: &str, text: &str) -> Result<Step, EvalError> {
        self.mark_replayed(id)?;
        self.journal_point(id, "journal.replay", key)?;
        self.agent_done(id, text, text)
    }
}

impl Domain {
    /// A journal point event (`journal.step`, `journal.replay`) on the Agent span on top of
    /// `id`, naming the step's journal `key`; built only while tracing.
    fn journal_point(&mut self, id: TaskId, name: &str, key: &str) -> Result<(), EvalError> {
        let (_, shared) = self.parts(id)?;
        if shared.tracer.enabled() {
            let plan = self.agent_plan(id)?;
            let (span, parent) = (plan.span_id, plan.parent_span);
            self.journal_span_point(span, Some(parent), name, key, "agent");
        }
        Ok(())
    }

    /// A journal point event `name` on `span` for the step of `kind` (`agent`, `tool`) at
    /// `key`; a `journal.step` point goes to the tap alone while the steps are private
    /// ([`Domain::set_private_steps`]). Built only while tracing.
    pub fn journal_span_point(
        &mut self,
        span: SpanId,
        parent: Option<SpanId>,
        name: &str,
        key: &str,
        kind: &str,
    ) {
        if !self.tracing() {
            return;
        }
        let attributes = crate::journal_tables::journal_point_attributes(key, kind);
        if self.private_steps && name == "journal.step" {
            self.tap_point(span, parent, name.into(), attributes);
        } else {
            self.point(span, parent, name.into(), attributes, vec![]);
        }
    }
}

#[cfg(test)]
#[path = "position_tests.rs"]
mod tests;
