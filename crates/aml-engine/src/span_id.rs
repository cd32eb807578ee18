//! Span identities. Resource-like boundaries (Agent, Sandbox, Workspace, File, Script, Loop)
//! are numbered `span-N`; everything else (components, System, Skill, Tool, agent sessions)
//! is `trace-N`; the root evaluation span is always `trace-0`. Both counters are per domain.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanId {
    Trace(u64),
    Span(u64),
}

impl SpanId {
    pub const ROOT: SpanId = SpanId::Trace(0);
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpanId::Trace(n) => write!(f, "trace-{n}"),
            SpanId::Span(n) => write!(f, "span-{n}"),
        }
    }
}

impl serde::Serialize for SpanId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
