//! An evaluation domain: everything one `runtime.evaluate()` call owns — limits, the tracer,
//! the root span, the Agent scheduler and the set of live tasks (the root task plus every
//! component-local `evaluate()` still running).

use crate::error::EvalError;
use crate::external_spans::ExternalSpans;
use crate::identity::Identity;
use crate::limits::Limits;
use crate::primitive::NodeKind;
use crate::scheduler::Scheduler;
use crate::shared::Shared;
use crate::span_id::SpanId;
use crate::step::Step;
use crate::task::Task;
use crate::trace::{Attributes, OpenSpan, SpanFailure, SpanKind, TraceRecord};
use crate::trace_batch::{TraceBatch, TraceStrings};

pub use crate::task::TaskId;

/// Runtime options the engine enforces, beyond the limits.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub allowed_tools: Option<Vec<String>>,
    pub allowed_mcp_servers: Option<Vec<String>>,
    pub system: String,
}

#[derive(Debug)]
pub struct Domain {
    shared: Shared,
    scheduler: Scheduler,
    external: ExternalSpans,
    root_span: Option<OpenSpan>,
    /// Boxed: a slot is one pointer, so a wide fan-out's table grows (and is copied when it
    /// doubles) by 8 bytes per task rather than the whole task.
    tasks: Vec<Option<Box<Task>>>,
    free: Vec<TaskId>,
    /// The string table of the record sinks' batches (trace_batch.rs).
    trace_strings: TraceStrings,
    /// Journal positions (position.rs), only in an evaluation given a journal.
    pub(crate) positions: Option<Box<crate::journal_tables::Positions>>,
    /// `journal.step` points go to the tap alone (`Domain::set_private_steps`).
    pub(crate) private_steps: bool,
}

const NO_TASK: EvalError = EvalError::Invariant("AML evaluation task is not active");

impl Domain {
    pub fn new(limits: Limits) -> Domain {
        Domain::with_policy(limits, Policy::default())
    }

    pub fn with_policy(limits: Limits, policy: Policy) -> Domain {
        Domain {
            scheduler: Scheduler::new(limits.max_concurrent_agents),
            external: ExternalSpans::default(),
            shared: Shared {
                limits,
                allowed_tools: policy.allowed_tools,
                allowed_mcp_servers: policy.allowed_mcp_servers,
                runtime_system: crate::js_text::js_trim(&policy.system).to_string(),
                ..Shared::default()
            },
            root_span: None,
            tasks: Vec::new(),
            free: Vec::new(),
            trace_strings: TraceStrings::default(),
            positions: None,
            private_steps: false,
        }
    }

    /// The usage every provider of this evaluation reported so far (empty: none; issue 37).
    pub fn usage(&self) -> crate::usage::Usage {
        self.shared.usage
    }

    /// Tokens `maxTokens` counted so far.
    pub(crate) fn tokens(&self) -> u64 {
        self.shared.tokens
    }

    pub fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    pub fn set_tracing(&mut self, enabled: bool) {
        self.shared.tracer.set_enabled(enabled);
    }

    /// Attaches the in-process trace consumer of this evaluation (`TraceTap`), or detaches
    /// it with `None`; records are made while it or a JS consumer is there.
    pub fn set_trace_tap(&mut self, tap: Option<Box<dyn crate::TraceTap>>) {
        self.shared.tracer.set_tap(tap);
    }

    /// Whether some trace consumer consents to content (sensitive attributes); see
    /// `Tracer::set_content`. Content is recorded by default.
    pub fn set_trace_content(&mut self, content: bool) {
        self.shared.tracer.set_content(content);
    }

    /// Whether records are made (a JS consumer or a tap is there).
    pub fn tracing(&self) -> bool {
        self.shared.tracer.enabled()
    }

    pub fn trace_pending(&self) -> bool {
        self.shared.tracer.has_pending()
    }

    pub fn drain_trace(&mut self) -> Vec<TraceRecord> {
        self.shared.tracer.drain()
    }

    /// Pending trace records as a record sink's batch (trace_batch.rs), `None` when there are
    /// none; `content` adds the sensitive attributes.
    pub fn drain_trace_batch(&mut self, content: bool) -> Option<TraceBatch> {
        let records = self.shared.tracer.drain();
        (!records.is_empty()).then(|| self.trace_strings.encode(&records, content))
    }

    /// Opens the `evaluation` root span `trace-0`.
    pub fn open_root(&mut self) {
        let tracer = &mut self.shared.tracer;
        let span = tracer.open(
            SpanId::ROOT,
            None,
            SpanKind::Evaluation,
            "evaluate".into(),
            vec![],
            vec![],
        );
        self.root_span = Some(span);
    }

    /// Closes the root span; it is the last record of a run.
    pub fn close_root(&mut self, failure: Option<SpanFailure>) {
        if let Some(span) = self.root_span.take() {
            self.shared
                .tracer
                .close(span, failure.as_ref(), vec![], vec![]);
        }
    }

    /// Opens a driver-owned span (agent session/turn/cleanup, tool). `resource` selects a
    /// `span-N` identity instead of `trace-N`.
    pub fn open_span(
        &mut self,
        kind: SpanKind,
        name: String,
        parent: Option<SpanId>,
        resource: bool,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> SpanId {
        let tracer = &mut self.shared.tracer;
        self.external
            .open(tracer, kind, name, parent, resource, attributes, sensitive)
    }

    pub fn close_span(
        &mut self,
        id: SpanId,
        failure: Option<SpanFailure>,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> Result<(), EvalError> {
        let tracer = &mut self.shared.tracer;
        self.external
            .close(tracer, id, failure.as_ref(), attributes, sensitive)
    }

    /// A point event on `span`; its parent is the span's own parent when the span is a
    /// driver-owned one, else `parent` as given.
    /// A point event for the tap alone (see `Tracer::tap_point`).
    pub(crate) fn tap_point(
        &mut self,
        span: SpanId,
        parent: Option<SpanId>,
        name: String,
        attributes: Attributes,
    ) {
        let parent = self.external.parent_of(span).unwrap_or(parent);
        self.shared
            .tracer
            .tap_point(span, parent, name.into(), attributes);
    }

    pub fn point(
        &mut self,
        span: SpanId,
        parent: Option<SpanId>,
        name: String,
        attributes: Attributes,
        sensitive: Attributes,
    ) {
        let parent = self.external.parent_of(span).unwrap_or(parent);
        self.shared
            .tracer
            .point(span, parent, name.into(), attributes, sensitive);
    }

    /// Starts a task. With `parent`, the task is a component-local `evaluate()` called by
    /// the component on top of the parent's stack. `structured` tasks must resolve to
    /// exactly one Agent with no text outside it.
    pub fn new_task(&mut self, parent: Option<TaskId>) -> Result<TaskId, EvalError> {
        let task = match parent {
            None => Task::root(),
            Some(p) => self.task(p)?.child(),
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.tasks[id as usize] = Some(Box::new(task));
                id
            }
            None => {
                self.tasks.push(Some(Box::new(task)));
                (self.tasks.len() - 1) as TaskId
            }
        };
        if self.positions.is_some() {
            self.note_origin(id, parent);
        }
        Ok(id)
    }

    /// Marks a fresh task as a structured evaluation.
    pub fn set_structured(&mut self, id: TaskId) -> Result<(), EvalError> {
        self.task(id)?.structured = true;
        Ok(())
    }

    /// Whether a live task is structured. Task ids are reused, so the facade asks before
    /// trusting a controller it filed under an id (a released task is never structured).
    pub fn is_structured(&self, id: TaskId) -> bool {
        matches!(self.tasks.get(id as usize), Some(Some(task)) if task.structured)
    }

    pub fn live_tasks(&self) -> usize {
        self.tasks.len() - self.free.len()
    }

    pub(crate) fn task_ref(&self, id: TaskId) -> Result<&Task, EvalError> {
        self.tasks
            .get(id as usize)
            .and_then(Option::as_deref)
            .ok_or(NO_TASK)
    }

    pub(crate) fn task(&mut self, id: TaskId) -> Result<&mut Task, EvalError> {
        self.tasks
            .get_mut(id as usize)
            .and_then(Option::as_deref_mut)
            .ok_or(NO_TASK)
    }

    /// A live task with the shared state, for engine modules that extend `Domain`.
    pub(crate) fn parts(&mut self, id: TaskId) -> Result<(&mut Task, &mut Shared), EvalError> {
        let task = self
            .tasks
            .get_mut(id as usize)
            .and_then(Option::as_deref_mut);
        Ok((task.ok_or(NO_TASK)?, &mut self.shared))
    }

    pub(crate) fn with_task(
        &mut self,
        id: TaskId,
        f: impl FnOnce(&mut Task, &mut Shared) -> Step,
    ) -> Result<Step, EvalError> {
        let task = self
            .tasks
            .get_mut(id as usize)
            .and_then(Option::as_deref_mut)
            .ok_or(NO_TASK)?;
        Ok(f(task, &mut self.shared))
    }

    pub fn text(&mut self, id: TaskId, text: &str) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.text(text, sh))
    }

    pub fn empty(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.empty(sh))
    }

    pub fn array(&mut self, id: TaskId, identity: Identity, len: u32) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.array(identity, len, sh))
    }

    pub fn node(
        &mut self,
        id: TaskId,
        identity: Identity,
        kind: NodeKind,
        name: &str,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.node(identity, kind, name, sh))
    }

    pub fn invalid(&mut self, id: TaskId, type_name: &str) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.invalid(type_name, sh))
    }

    pub fn unknown_element(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, sh| t.unknown_element(sh))
    }

    pub fn scheduler(&mut self) -> &mut Scheduler {
        &mut self.scheduler
    }

    pub fn kind_on_top(&mut self, id: TaskId) -> Result<Option<NodeKind>, EvalError> {
        Ok(self.task(id)?.kind_on_top())
    }

    /// Depth of the node on top of the task (the component being invoked).
    pub fn depth(&mut self, id: TaskId) -> Result<u64, EvalError> {
        Ok(self.task(id)?.depth())
    }

    /// The span enclosing the task's next value (for a component: its own span).
    pub fn current_span(&mut self, id: TaskId) -> Result<SpanId, EvalError> {
        Ok(self.task(id)?.current_span())
    }

    /// The driver failed the task (a component threw, cancellation, a thenable rejected):
    /// close its spans with `failure` and discard it.
    pub fn fail(&mut self, id: TaskId, failure: SpanFailure) -> Result<(), EvalError> {
        let task = self
            .tasks
            .get_mut(id as usize)
            .and_then(Option::as_deref_mut)
            .ok_or(NO_TASK)?;
        task.fail(&failure, &mut self.shared);
        self.release(id);
        Ok(())
    }

    /// After [`crate::Op::Done`]: the task's text. The task is released.
    pub fn finish(&mut self, id: TaskId) -> Result<String, EvalError> {
        let out = self.task(id)?.take_output();
        self.release(id);
        Ok(out)
    }

    /// After [`crate::Op::Error`]: the error, without unwinding (scopes may need cleanup).
    pub fn error_message(&mut self, id: TaskId) -> Result<String, EvalError> {
        Ok(self.task(id)?.error().map_or_else(
            || "AML evaluation task has no error".into(),
            ToString::to_string,
        ))
    }

    /// After [`crate::Op::Error`]: unwinds the task, closing its spans with the error, and
    /// releases it.
    pub fn take_error(&mut self, id: TaskId) -> Result<EvalError, EvalError> {
        let task = self
            .tasks
            .get_mut(id as usize)
            .and_then(Option::as_deref_mut)
            .ok_or(NO_TASK)?;
        let err = task
            .take_error()
            .unwrap_or(EvalError::Invariant("AML evaluation task has no error"));
        let failure = SpanFailure {
            error_type: err.js_name().into(),
            message: err.to_string(),
        };
        task.fail(&failure, &mut self.shared);
        self.release(id);
        Ok(err)
    }

    fn release(&mut self, id: TaskId) {
        if let Some(slot) = self.tasks.get_mut(id as usize) {
            if slot.take().is_some() {
                self.free.push(id);
            }
        }
    }
}
