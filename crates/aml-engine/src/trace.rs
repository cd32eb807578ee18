//! The trace model: span identities, the per-evaluation sequence, and the records a driver
//! turns into the public `AmlTraceEvent` objects (INVENTORY §2.2).
//!
//! Records are produced only while tracing is enabled (some listener exists), so a run
//! without listeners pays for two counters and an `Instant` per span, nothing more. Every
//! open span keeps its identity (id, parent, kind, name) whether or not it was reported, so
//! a listener that arrives while a span is open still receives its `span.end` (OBS-1).
//! Sensitive attributes travel separately from metadata so the facade can build the
//! redacted event and, only when a listener consents, the content event.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

use crate::span_id::SpanId;
pub use crate::trace_clock::trace_clock_ms;
use crate::trace_clock::{clock_ms, now_ms, start_clock};
use crate::usage::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanKind {
    Evaluation,
    Component,
    Agent,
    File,
    System,
    Skill,
    Tool,
    Loop,
    Sandbox,
    Script,
    Workspace,
    Parallel,
    Include,
}

impl SpanKind {
    #[cfg(test)]
    pub(crate) const ALL: [SpanKind; 13] = {
        use SpanKind::*;
        [
            Evaluation, Component, Agent, File, System, Skill, Tool, Loop, Sandbox, Script,
            Workspace, Parallel, Include,
        ]
    };

    pub fn parse(text: &str) -> Option<SpanKind> {
        use SpanKind::*;
        Some(match text {
            "evaluation" => Evaluation,
            "component" => Component,
            "agent" => Agent,
            "file" => File,
            "system" => System,
            "skill" => Skill,
            "tool" => Tool,
            "loop" => Loop,
            "sandbox" => Sandbox,
            "script" => Script,
            "workspace" => Workspace,
            "parallel" => Parallel,
            "include" => Include,
            _ => return None,
        })
    }

    /// The public name (`"agent"`…), as the events' `kind` carries it.
    pub fn as_str(self) -> &'static str {
        use SpanKind::*;
        match self {
            Evaluation => "evaluation",
            Component => "component",
            Agent => "agent",
            File => "file",
            System => "system",
            Skill => "skill",
            Tool => "tool",
            Loop => "loop",
            Sandbox => "sandbox",
            Script => "script",
            Workspace => "workspace",
            Parallel => "parallel",
            Include => "include",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanStatus {
    Ok,
    Error,
}

/// `AmlTraceAttribute = boolean | number | string | readonly string[]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AttrValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
    /// `usage` (issue 37): an Agent's reported usage, or the total of a span's subtree; only
    /// the reported fields, as the public `AmlUsage` object.
    Usage(Usage),
}

/// An attribute key: the engine's own keys are static and cost no allocation per record.
pub type AttrKey = Cow<'static, str>;

pub type Attributes = Vec<(AttrKey, AttrValue)>;

/// A span's name: the primitives' names are static (`"Agent"`, `"System"`…) and cost no
/// allocation per span; component and driver span names are owned.
pub type SpanName = Cow<'static, str>;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum TraceRecord {
    #[serde(rename = "span.start")]
    SpanStart {
        #[serde(rename = "spanId")]
        span_id: SpanId,
        #[serde(rename = "parentSpanId", skip_serializing_if = "Option::is_none")]
        parent: Option<SpanId>,
        sequence: u64,
        timestamp: f64,
        /// Sub-millisecond time on the monotonic trace clock (`trace_clock_ms`).
        at: f64,
        kind: SpanKind,
        name: SpanName,
        #[serde(serialize_with = "attrs")]
        attributes: Attributes,
        #[serde(serialize_with = "attrs")]
        sensitive: Attributes,
    },
    #[serde(rename = "span.end")]
    SpanEnd {
        #[serde(rename = "spanId")]
        span_id: SpanId,
        #[serde(rename = "parentSpanId", skip_serializing_if = "Option::is_none")]
        parent: Option<SpanId>,
        sequence: u64,
        timestamp: f64,
        at: f64,
        kind: SpanKind,
        name: SpanName,
        status: SpanStatus,
        #[serde(rename = "durationMs")]
        duration_ms: f64,
        #[serde(serialize_with = "attrs")]
        attributes: Attributes,
        #[serde(serialize_with = "attrs")]
        sensitive: Attributes,
    },
    #[serde(rename = "event")]
    Point {
        #[serde(rename = "spanId")]
        span_id: SpanId,
        #[serde(rename = "parentSpanId", skip_serializing_if = "Option::is_none")]
        parent: Option<SpanId>,
        sequence: u64,
        timestamp: f64,
        at: f64,
        name: SpanName,
        #[serde(serialize_with = "attrs")]
        attributes: Attributes,
        #[serde(serialize_with = "attrs")]
        sensitive: Attributes,
    },
}

/// Attributes serialise as an object in insertion order; the facade freezes them with a
/// null prototype.
pub(crate) fn attrs<S: serde::Serializer>(list: &Attributes, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(list.len()))?;
    for (k, v) in list {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// A trace consumer inside the process: the run recorder (crates/aml-runs, attached by the
/// binding) takes each record as the tracer makes it, so recording a run builds no JS object,
/// crosses no boundary and needs no drain from the facade (docs/STUDIO.md "Cost"). JS trace
/// listeners still get theirs through `Tracer::drain`; a tap gets its own copy only while
/// both consume, so a tap alone moves each record instead of cloning it.
pub trait TraceTap {
    /// Receives every record of one evaluation, in sequence order.
    fn record(&mut self, record: TraceRecord);
}

/// The tracer's slot for a tap (a trait object has no `Debug`).
struct Tap(Box<dyn TraceTap>);

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}

/// An open span: what `span.end` must repeat from `span.start`, plus its start instant.
#[derive(Debug, Clone)]
pub struct OpenSpan {
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub kind: SpanKind,
    pub name: SpanName,
    pub started: Instant,
}

/// How a span failed: `error.type` is metadata, `error.message` is sensitive.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanFailure {
    pub error_type: String,
    pub message: String,
}

/// Per-domain trace state.
#[derive(Debug)]
pub struct Tracer {
    /// Some JS listener or record sink consumes records (through `drain`).
    enabled: bool,
    /// A consumer inside the process (`TraceTap`), fed as records are made.
    tap: Option<Tap>,
    /// No consumer consents to content (INVENTORY's consent rules): sensitive attributes are
    /// neither built by the engine nor kept when a caller passes them, so prompts and outputs
    /// are not copied for records that would drop them anyway.
    redact_content: bool,
    next_trace: u64,
    next_span: u64,
    sequence: u64,
    pending: Vec<TraceRecord>,
    /// Usage reported below each open span that has any, rolled up to the parent when the
    /// span closes (issue 37). Empty — and never touched beyond one check — without usage.
    subtree_usage: HashMap<SpanId, Usage>,
}

impl Default for Tracer {
    fn default() -> Self {
        // The trace clock's origin predates every instant a tracer takes, so no `at` is
        // clamped to 0 (which made durations disagree with `at` in the first traced span).
        start_clock();
        Tracer {
            enabled: false,
            tap: None,
            redact_content: false,
            next_trace: 1,
            next_span: 1,
            sequence: 0,
            pending: Vec::new(),
            subtree_usage: HashMap::new(),
        }
    }
}

impl Tracer {
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Whether records are made: some consumer, in JS or a tap, takes them.
    pub fn enabled(&self) -> bool {
        self.enabled || self.tap.is_some()
    }

    /// Attaches (or, with `None`, detaches) the in-process consumer of every later record.
    pub fn set_tap(&mut self, tap: Option<Box<dyn TraceTap>>) {
        self.tap = tap.map(Tap);
    }

    /// A record's `timestamp` (whole `Date.now()` ms): only the public events carry it, so
    /// with no JS consumer (a tap alone, whose compact form leaves it out) the clock is not read.
    fn wall_ms(&self) -> f64 {
        if self.enabled {
            now_ms()
        } else {
            0.0
        }
    }

    /// Hands `record` to its consumers: the tap (a copy only while JS also consumes) and the
    /// pending list that `drain` empties for JS.
    fn emit(&mut self, record: TraceRecord) {
        match (&mut self.tap, self.enabled) {
            (Some(tap), false) => tap.0.record(record),
            (Some(tap), true) => {
                tap.0.record(record.clone());
                self.pending.push(record);
            }
            (None, _) => self.pending.push(record),
        }
    }

    /// Whether some consumer consents to content; sensitive attributes are recorded only then.
    pub fn set_content(&mut self, content: bool) {
        self.redact_content = !content;
    }

    /// Whether a record made now keeps sensitive attributes: worth building them.
    pub fn wants_content(&self) -> bool {
        self.enabled() && !self.redact_content
    }

    /// `sensitive`, or nothing when no consumer consents to content.
    fn consented(&self, sensitive: Attributes) -> Attributes {
        if self.redact_content {
            Vec::new()
        } else {
            sensitive
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn drain(&mut self) -> Vec<TraceRecord> {
        std::mem::take(&mut self.pending)
    }

    /// Allocates a `trace-N` identity (components, System, Skill, Tool, sessions).
    pub fn next_trace_id(&mut self) -> SpanId {
        let id = SpanId::Trace(self.next_trace);
        self.next_trace += 1;
        id
    }

    /// Allocates a `span-N` identity (Agent, Sandbox, Workspace, File, Script, Loop).
    pub fn next_span_id(&mut self) -> SpanId {
        let id = SpanId::Span(self.next_span);
        self.next_span += 1;
        id
    }

    fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Opens a span and, when tracing, records its `span.start`.
    pub fn open(
        &mut self,
        id: SpanId,
        parent: Option<SpanId>,
        kind: SpanKind,
        name: SpanName,
        attributes: Attributes,
        sensitive: Attributes,
    ) -> OpenSpan {
        let started = Instant::now();
        if self.enabled() {
            let sequence = self.next_sequence();
            let sensitive = self.consented(sensitive);
            self.emit(TraceRecord::SpanStart {
                span_id: id,
                parent,
                sequence,
                timestamp: self.wall_ms(),
                at: clock_ms(started),
                kind,
                name: name.clone(),
                attributes,
                sensitive,
            });
        }
        OpenSpan {
            id,
            parent,
            kind,
            name,
            started,
        }
    }

    /// Adds `usage` to the subtree total of the open span `span`; its `span.end` carries the
    /// total as `usage` (unless it sets its own) and hands it to its parent.
    pub fn add_usage(&mut self, span: SpanId, usage: &Usage) {
        self.subtree_usage.entry(span).or_default().add(usage);
    }

    /// Closes a span; a failure adds `error.type` (metadata) and `error.message` (sensitive).
    /// Reported when tracing is enabled now, even if it was not when the span opened.
    pub fn close(
        &mut self,
        span: OpenSpan,
        failure: Option<&SpanFailure>,
        mut attributes: Attributes,
        mut sensitive: Attributes,
    ) {
        let rolled = if self.subtree_usage.is_empty() {
            None
        } else {
            self.subtree_usage.remove(&span.id)
        };
        if let (Some(total), Some(parent)) = (&rolled, span.parent) {
            self.add_usage(parent, total);
        }
        if !self.enabled() {
            return;
        }
        if let Some(total) = rolled {
            if !attributes.iter().any(|(key, _)| key == "usage") {
                attributes.push(("usage".into(), AttrValue::Usage(total)));
            }
        }
        let status = match failure {
            None => SpanStatus::Ok,
            Some(f) => {
                attributes.push(("error.type".into(), AttrValue::Text(f.error_type.clone())));
                if !self.redact_content {
                    sensitive.push(("error.message".into(), AttrValue::Text(f.message.clone())));
                }
                SpanStatus::Error
            }
        };
        let sensitive = self.consented(sensitive);
        let sequence = self.next_sequence();
        let ended = Instant::now();
        self.emit(TraceRecord::SpanEnd {
            span_id: span.id,
            parent: span.parent,
            sequence,
            timestamp: self.wall_ms(),
            at: clock_ms(ended),
            kind: span.kind,
            name: span.name,
            status,
            duration_ms: ended.saturating_duration_since(span.started).as_secs_f64() * 1000.0,
            attributes,
            sensitive,
        });
    }

    /// Records a point event on `span` for the tap alone (JS listeners never see it); a
    /// no-op without a tap.
    pub fn tap_point(
        &mut self,
        span: SpanId,
        parent: Option<SpanId>,
        name: SpanName,
        attributes: Attributes,
    ) {
        if self.tap.is_none() {
            return;
        }
        // Unseen by the listeners, so it takes no number from their sequence either.
        let (enabled, sequence) = (std::mem::replace(&mut self.enabled, false), self.sequence);
        self.point(span, parent, name, attributes, Vec::new());
        self.enabled = enabled;
        self.sequence = sequence;
    }

    /// Records a point event on `span`.
    pub fn point(
        &mut self,
        span: SpanId,
        parent: Option<SpanId>,
        name: SpanName,
        attributes: Attributes,
        sensitive: Attributes,
    ) {
        if !self.enabled() {
            return;
        }
        let sequence = self.next_sequence();
        let sensitive = self.consented(sensitive);
        self.emit(TraceRecord::Point {
            span_id: span,
            parent,
            sequence,
            timestamp: self.wall_ms(),
            at: trace_clock_ms(),
            name,
            attributes,
            sensitive,
        });
    }
}

#[cfg(test)]
#[path = "trace_tests.rs"]
pub(crate) mod tests;
