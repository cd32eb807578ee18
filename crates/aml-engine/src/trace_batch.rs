//! The batch form of trace records that a record sink consumes (the facade's
//! `lib/observability/trace-batch.js` decodes it into the sink protocol's compact records,
//! `lib/observability/trace-sink.js`). Numbers go in one `f64` array and strings by
//! reference into a table both sides grow in step, so the recurring strings (kinds, span
//! names, attribute keys, provider names) cross the boundary once per domain, and a batch
//! costs no JSON text and no parse. Measured against the compact JSON form it replaced: the
//! parse alone was ~0.9 µs of the exporter's cost per Agent (docs/OBSERVABILITY.md "Cost").
//!
//! Layout of `numbers` (every field one `f64`):
//! - start: `0, span, parent, kind, name, at, attributes…, sensitive…?`
//! - end:   `1, span, kind, failed, durationMs, attributes…, sensitive…?`
//! - point: `2, span, name, at, attributes…, sensitive…?`
//!
//! A span id `trace-N` is `2N`, `span-N` is `2N + 1`, no parent is `-1`. `failed` is 0 or 1.
//! An attribute set is its length, then per attribute a key reference, a tag and the value:
//! tag 0 false, 1 true, 2 a number, 3 a string reference, 4 a list (its length, then one
//! string reference per item). The sensitive set follows only when the batch carries content.
//! A string reference `r ≥ 0` is entry `r` of the table; `r < 0` is entry `-r - 1` of the
//! batch's own strings, for strings too long or too many to keep. The batch's `strings` are
//! first its `interned` new table entries (appended to the table, in order), then its own.

use std::collections::HashMap;

use crate::span_id::SpanId;
use crate::trace::{AttrValue, Attributes, TraceRecord};
use crate::trace_compact::CompactField;

/// Strings longer than this stay in their batch (prompts, outputs, paths): the table keeps
/// what recurs.
const MAX_INTERNED_LEN: usize = 64;
/// A domain's table stops growing here; later strings stay in their batches.
const MAX_INTERNED: usize = 4096;

/// One drained batch (see the module documentation).
#[derive(Debug, Default, PartialEq)]
pub struct TraceBatch {
    pub numbers: Vec<f64>,
    pub strings: Vec<String>,
    /// How many of `strings` are new table entries (the rest are the batch's own).
    pub interned: usize,
}

/// The engine's side of the string table of one domain's batches.
#[derive(Debug, Default)]
pub struct TraceStrings {
    table: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
}

struct Encoder<'a> {
    table: &'a mut TraceStrings,
    numbers: Vec<f64>,
    interned: Vec<String>,
    local: Vec<String>,
}

impl Encoder<'_> {
    fn string(&mut self, text: &str) {
        let reference = if let Some(&index) = self.table.table.get(text) {
            f64::from(index)
        } else if text.len() <= MAX_INTERNED_LEN && self.table.table.len() < MAX_INTERNED {
            let index = self.table.table.len() as u32;
            self.table.table.insert(text.into(), index);
            self.interned.push(text.to_string());
            f64::from(index)
        } else {
            self.local.push(text.to_string());
            -(self.local.len() as f64)
        };
        self.numbers.push(reference);
    }

    fn span(&mut self, id: SpanId) {
        let encoded = match id {
            SpanId::Trace(n) => n * 2,
            SpanId::Span(n) => n * 2 + 1,
        };
        self.numbers.push(encoded as f64);
    }

    fn attributes(&mut self, attributes: &Attributes) {
        self.numbers.push(attributes.len() as f64);
        for (key, value) in attributes {
            self.string(key);
            match value {
                AttrValue::Bool(flag) => self.numbers.push(f64::from(u8::from(*flag))),
                AttrValue::Number(number) => self.numbers.extend([2.0, *number]),
                AttrValue::Text(text) => {
                    self.numbers.push(3.0);
                    self.string(text);
                }
                AttrValue::List(items) => {
                    self.numbers.extend([4.0, items.len() as f64]);
                    for item in items {
                        self.string(item);
                    }
                }
                // Tag 5, then the five fields in USAGE_FIELDS order; -1 is "not reported".
                AttrValue::Usage(usage) => {
                    self.numbers.push(5.0);
                    for field in usage.fields() {
                        self.numbers.push(field.map_or(-1.0, |n| n as f64));
                    }
                }
            }
        }
    }

    fn record(&mut self, record: &TraceRecord, content: bool) {
        record.compact_fields(content, |field| match field {
            CompactField::Type(tag) => self.numbers.push(f64::from(tag)),
            CompactField::Number(n) => self.numbers.push(n),
            CompactField::Span(id) => self.span(id),
            CompactField::NoSpan => self.numbers.push(-1.0),
            CompactField::Text(text) => self.string(text),
            CompactField::Bool(b) => self.numbers.push(f64::from(u8::from(b))),
            CompactField::Attributes(attributes) => self.attributes(attributes),
        });
    }
}

impl TraceStrings {
    /// Encodes `records`; `content` adds each record's sensitive attributes, so the content
    /// of an evaluation nobody consented for never becomes JS text.
    pub fn encode(&mut self, records: &[TraceRecord], content: bool) -> TraceBatch {
        let mut encoder = Encoder {
            table: self,
            // About 12 numbers per record without attributes, 3 per attribute.
            numbers: Vec::with_capacity(records.len() * 16),
            interned: Vec::new(),
            local: Vec::new(),
        };
        for record in records {
            encoder.record(record, content);
        }
        let interned = encoder.interned.len();
        let mut strings = encoder.interned;
        strings.append(&mut encoder.local);
        TraceBatch {
            numbers: encoder.numbers,
            strings,
            interned,
        }
    }
}

#[cfg(test)]
#[path = "trace_batch_tests.rs"]
mod tests;
