//! An evaluation domain: everything one `runtime.evaluate()` call owns — limits, the tracer,
//! the root span and the set of live tasks (the root task plus every component-local
//! `evaluate()` still running).

use crate::error::EvalError;
use crate::limits::Limits;
use crate::span_id::SpanId;
use crate::step::Step;
use crate::task::{NodeKind, Task};
use crate::trace::{OpenSpan, SpanFailure, SpanKind, TraceRecord, Tracer};

pub type TaskId = u32;

#[derive(Debug)]
pub struct Domain {
    limits: Limits,
    tracer: Tracer,
    root_span: Option<(OpenSpan, bool)>,
    tasks: Vec<Option<Task>>,
    free: Vec<TaskId>,
}

impl Domain {
    pub fn new(limits: Limits) -> Domain {
        Domain {
            limits,
            tracer: Tracer::default(),
            root_span: None,
            tasks: Vec::new(),
            free: Vec::new(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn set_tracing(&mut self, enabled: bool) {
        self.tracer.set_enabled(enabled);
    }

    pub fn drain_trace(&mut self) -> Vec<TraceRecord> {
        self.tracer.drain()
    }

    /// Opens the `evaluation` root span `trace-0`.
    pub fn open_root(&mut self) {
        let reported = self.tracer.enabled();
        let span = self.tracer.open(
            SpanId::ROOT,
            None,
            SpanKind::Evaluation,
            "evaluate".into(),
            vec![],
            vec![],
        );
        self.root_span = Some((span, reported));
    }

    /// Closes the root span; it is the last record of a run.
    pub fn close_root(&mut self, failure: Option<SpanFailure>) {
        if let Some((span, reported)) = self.root_span.take() {
            if reported {
                self.tracer.close(span, failure.as_ref(), vec![], vec![]);
            }
        }
    }

    /// Starts a task. With `parent`, the task is a component-local `evaluate()` called by
    /// the component on top of the parent's stack.
    pub fn new_task(&mut self, parent: Option<TaskId>) -> Result<TaskId, EvalError> {
        let task = match parent {
            None => Task::root(),
            Some(p) => self.task(p)?.child(),
        };
        Ok(match self.free.pop() {
            Some(id) => {
                self.tasks[id as usize] = Some(task);
                id
            }
            None => {
                self.tasks.push(Some(task));
                (self.tasks.len() - 1) as TaskId
            }
        })
    }

    pub fn live_tasks(&self) -> usize {
        self.tasks.len() - self.free.len()
    }

    fn task(&mut self, id: TaskId) -> Result<&mut Task, EvalError> {
        self.tasks
            .get_mut(id as usize)
            .and_then(Option::as_mut)
            .ok_or(EvalError::Invariant("AML evaluation task is not active"))
    }

    fn with_task(
        &mut self,
        id: TaskId,
        f: impl FnOnce(&mut Task, &Limits, &mut Tracer) -> Step,
    ) -> Result<Step, EvalError> {
        let Domain {
            limits,
            tracer,
            tasks,
            ..
        } = self;
        let task = tasks
            .get_mut(id as usize)
            .and_then(Option::as_mut)
            .ok_or(EvalError::Invariant("AML evaluation task is not active"))?;
        Ok(f(task, limits, tracer))
    }

    pub fn text(&mut self, id: TaskId, text: &str) -> Result<Step, EvalError> {
        self.with_task(id, |t, _, tr| t.text(text, tr))
    }

    pub fn empty(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, _, tr| t.empty(tr))
    }

    pub fn array(&mut self, id: TaskId, identity: u32, len: u32) -> Result<Step, EvalError> {
        self.with_task(id, |t, _, tr| t.array(identity, len, tr))
    }

    pub fn node(
        &mut self,
        id: TaskId,
        identity: u32,
        kind: NodeKind,
        name: &str,
    ) -> Result<Step, EvalError> {
        self.with_task(id, |t, l, tr| t.node(identity, kind, name, l, tr))
    }

    pub fn invalid(&mut self, id: TaskId, type_name: &str) -> Result<Step, EvalError> {
        self.with_task(id, |t, _, tr| t.invalid(type_name, tr))
    }

    pub fn unknown_element(&mut self, id: TaskId) -> Result<Step, EvalError> {
        self.with_task(id, |t, _, tr| t.unknown_element(tr))
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
        let Domain { tracer, .. } = self;
        let task = self
            .tasks
            .get_mut(id as usize)
            .and_then(Option::as_mut)
            .ok_or(EvalError::Invariant("AML evaluation task is not active"))?;
        task.fail(&failure, tracer);
        self.release(id);
        Ok(())
    }

    /// After [`crate::Op::Done`]: the task's text. The task is released.
    pub fn finish(&mut self, id: TaskId) -> Result<String, EvalError> {
        let out = self.task(id)?.take_output();
        self.release(id);
        Ok(out)
    }

    /// After [`crate::Op::Error`]: the error. The task is released.
    pub fn take_error(&mut self, id: TaskId) -> Result<EvalError, EvalError> {
        let err = self
            .task(id)?
            .take_error()
            .unwrap_or(EvalError::Invariant("AML evaluation task has no error"));
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
