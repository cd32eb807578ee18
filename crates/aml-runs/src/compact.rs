//! A trace record in the run's events file: the compact array of the record-sink protocol
//! (fields and order: `aml_engine::TraceRecord::compact_fields`), which the studio page reads.
//! The sensitive attributes are written only for a run recorded with content (docs/STUDIO.md
//! "Content policy").

use aml_engine::trace::Attributes;
use aml_engine::{CompactField, TraceRecord};
use serde::ser::{Error, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// `record` as its compact array; `content`: the run keeps sensitive attributes.
pub(crate) struct Compact<'a> {
    pub record: &'a TraceRecord,
    pub content: bool,
}

struct Attrs<'a>(&'a Attributes);

impl Serialize for Attrs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Serialize for Compact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        self.record.compact_fields(self.content, |field| {
            if failed.is_some() {
                return;
            }
            let written = match field {
                CompactField::Type(tag) => seq.serialize_element(&tag),
                CompactField::Number(n) => seq.serialize_element(&n),
                CompactField::Span(id) => seq.serialize_element(&id),
                CompactField::NoSpan => seq.serialize_element(&()),
                CompactField::Text(text) => seq.serialize_element(text),
                CompactField::Bool(b) => seq.serialize_element(&b),
                CompactField::Attributes(attributes) => seq.serialize_element(&Attrs(attributes)),
            };
            failed = written.err();
        });
        match failed {
            Some(error) => Err(S::Error::custom(error)),
            None => seq.end(),
        }
    }
}
