//! One entry of a task's explicit frame stack. The stack replaces recursion, so nesting depth
//! is bounded by memory, not by the native or JS call stack.

use crate::capture::Capture;
use crate::identity::Identity;
use crate::primitive::{kind_adds_depth, NodeKind};
use crate::trace::OpenSpan;

#[derive(Debug)]
pub(crate) enum Frame {
    /// An array being read lazily: `remaining` elements have not been requested yet.
    /// `len` is kept for journal positions (position.rs), which count from the start.
    Array {
        identity: Identity,
        remaining: u32,
        len: u32,
    },
    /// A node whose result is being evaluated. `span` is `None` for primitives that open
    /// their spans in their own protocol.
    Node {
        identity: Identity,
        kind: NodeKind,
        span: Option<OpenSpan>,
    },
    /// A resource or action scope (Sandbox, Workspace, Script, File…): its subtree runs
    /// inside it, then the driver completes it (release, run, write) before it pops.
    /// `capture` is `Some` when the children's text is the scope's private input (a
    /// Script's source, a File's content) rather than output of the surrounding channel.
    Scope {
        identity: Identity,
        span: Option<OpenSpan>,
        capture: Option<String>,
    },
    /// A primitive that collects its children's text into its own channel.
    Capture {
        identity: Identity,
        capture: Capture,
        span: Option<OpenSpan>,
    },
}

impl Frame {
    pub(crate) fn identity(&self) -> Identity {
        match self {
            Frame::Array { identity, .. }
            | Frame::Node { identity, .. }
            | Frame::Capture { identity, .. }
            | Frame::Scope { identity, .. } => *identity,
        }
    }

    pub(crate) fn span_id(&self) -> Option<crate::SpanId> {
        match self {
            Frame::Node { span: Some(s), .. }
            | Frame::Capture { span: Some(s), .. }
            | Frame::Scope { span: Some(s), .. } => Some(s.id),
            _ => None,
        }
    }

    /// Whether this frame adds a depth level: every node but a Context Provider; no array.
    pub(crate) fn adds_depth(&self) -> bool {
        match self {
            Frame::Array { .. } => false,
            Frame::Node { kind, .. } => kind_adds_depth(*kind),
            Frame::Capture { .. } | Frame::Scope { .. } => true,
        }
    }
}
