//! Driver-owned spans and point events (agent sessions, turns, cleanup, tools). Attributes
//! cross as JSON objects of scalars; span ids as their `trace-N` / `span-N` text.

use aml_engine::{attributes_from_json, SpanId};
use napi::{Error, Result};
use napi_derive::napi;

use crate::boundary::guard::guard;
use crate::boundary::registry;

pub(crate) fn span_id(text: &str) -> Result<SpanId> {
    SpanId::parse(text).ok_or_else(|| Error::from_reason(format!("invalid AML span id {text:?}")))
}

pub(crate) fn attrs(json: Option<String>) -> Result<aml_engine::trace::Attributes> {
    match json {
        None => Ok(Vec::new()),
        Some(text) => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| Error::from_reason(e.to_string()))?;
            Ok(attributes_from_json(&value))
        }
    }
}

#[napi]
pub fn point(
    domain: u32,
    span: String,
    parent: Option<String>,
    name: String,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<()> {
    guard(|| {
        let span = span_id(&span)?;
        let parent = parent.as_deref().map(span_id).transpose()?;
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        registry::with(domain, |d| {
            d.point(span, parent, name, attributes, sensitive);
            Ok(())
        })
    })
}
