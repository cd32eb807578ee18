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

    /// Parses the `trace-N` / `span-N` form produced by `Display`.
    pub fn parse(text: &str) -> Option<SpanId> {
        if let Some(n) = text.strip_prefix("trace-") {
            return n.parse().ok().map(SpanId::Trace);
        }
        text.strip_prefix("span-")?.parse().ok().map(SpanId::Span)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_display() {
        for id in [SpanId::ROOT, SpanId::Trace(7), SpanId::Span(12)] {
            assert_eq!(SpanId::parse(&id.to_string()), Some(id));
        }
        assert_eq!(SpanId::parse("span-x"), None);
        assert_eq!(SpanId::parse("other-1"), None);
    }
}
