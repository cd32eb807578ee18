//! The selected Agent of a `<Loop>` render task, parked while the rest of the render value
//! is checked (loop_render.rs). Its own module because `Task` holds one: the task state
//! depends on this data, and the render behaviour depends on both.

use crate::frame::Frame;
use crate::identity::Identity;
use crate::shared::Shared;
use crate::span_id::SpanId;
use crate::trace::{OpenSpan, SpanFailure};

/// The selected Agent of a render task while the rest of the render value is checked.
#[derive(Debug)]
pub(crate) struct Parked {
    /// The Agent's node frame; `None` once it was resumed.
    pub(crate) frame: Option<Frame>,
    /// Identities of the frames below it (its ancestors) when it was found.
    pub(crate) identities: Vec<Identity>,
    /// The task's node depth with the Agent counted.
    pub(crate) depth: u64,
    /// The span that enclosed it.
    pub(crate) parent: SpanId,
    /// How many of its ancestor frames are still on the stack: a frame popped below this
    /// height is one of them.
    pub(crate) floor: usize,
    /// Spans of ancestors popped while it waits, innermost first; they close after it.
    pub(crate) deferred: Vec<OpenSpan>,
}

impl Parked {
    /// A frame was popped, leaving `height` frames; returns the span to close now, if any.
    pub(crate) fn popped(&mut self, height: usize, span: Option<OpenSpan>) -> Option<OpenSpan> {
        if height >= self.floor {
            return span;
        }
        self.floor = height;
        self.deferred.extend(span);
        None
    }

    pub(crate) fn close_deferred(self, failure: Option<&SpanFailure>, sh: &mut Shared) {
        for span in self.deferred {
            sh.tracer.close(span, failure, vec![], vec![]);
        }
    }
}
