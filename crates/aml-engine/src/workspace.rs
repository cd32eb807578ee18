//! Filesystem primitives in the engine: where a `<Workspace>` may stand (INVENTORY WS-1
//! placement) and which channel a `<File>` or `<Include>` sits in. Acquiring, writing and
//! reading are the facade's (they are I/O); the rules about *where* are the engine's, because
//! only the engine sees the frame stack — including across nested `evaluate()` tasks.

use crate::agent::Target;
use crate::domain::{Domain, TaskId};
use crate::error::EvalError;
use crate::frame::Frame;
use crate::primitive::NodeKind;
use crate::primitive::Primitive;
use crate::shared::Shared;
use crate::task::Task;

/// The channel a primitive on top of a task writes into, as the facade sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// The root text channel (or a nested task's own result).
    Root,
    /// An Agent prompt, or that Agent's `<System>` / `<FollowUp>`: text reaches one plan.
    Agent,
    /// The private input of a scope (a Script's source, a File's content, a Skill body).
    Text,
}

impl Task {
    /// Whether the first `len` frames hold no scope and no capture: only arrays, components
    /// and transparent wrappers, so a value there lands in the task's own result.
    pub(crate) fn frames_are_top_level(&self, len: usize) -> bool {
        self.frames[..len].iter().all(|f| match f {
            Frame::Array { .. } => true,
            Frame::Node {
                kind: NodeKind::Primitive(code),
                ..
            } => Primitive::from_code(*code).is_some_and(Primitive::is_transparent),
            Frame::Node { .. } => true,
            Frame::Scope { .. } | Frame::Capture { .. } => false,
        })
    }

    /// Claims the domain's one `<Workspace>` for the primitive on top, or says why not.
    /// The count comes first: a second Workspace is reported as such wherever it stands.
    pub(crate) fn claim_workspace(&self, sh: &mut Shared) -> Result<(), EvalError> {
        if sh.workspace_claimed {
            return Err(EvalError::SecondWorkspace);
        }
        let below_top = self.frames.len().saturating_sub(1);
        if !self.top_level || !self.frames_are_top_level(below_top) {
            return Err(EvalError::WorkspaceNotTopLevel);
        }
        sh.workspace_claimed = true;
        Ok(())
    }

    pub(crate) fn channel(&self) -> Channel {
        match self.target() {
            Target::None => Channel::Root,
            Target::Agent { .. } | Target::System | Target::FollowUp => Channel::Agent,
            Target::Text => Channel::Text,
        }
    }
}

impl Domain {
    /// Claims the one `<Workspace>` of this domain for the primitive on top of `id`.
    /// `Ok(Err(e))` is a placement error the facade throws as an `EvaluationError`.
    pub fn claim_workspace(&mut self, id: TaskId) -> Result<Result<(), EvalError>, EvalError> {
        let (task, shared) = self.parts(id)?;
        Ok(task.claim_workspace(shared))
    }

    /// The channel the primitive (or scope) on top of `id` writes into.
    pub fn channel(&mut self, id: TaskId) -> Result<Channel, EvalError> {
        Ok(self.task(id)?.channel())
    }
}
