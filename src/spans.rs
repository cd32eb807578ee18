//! Driver-owned spans and point events (agent sessions, turns, cleanup, tools). Attributes
//! cross as JSON objects of scalars; span ids as their `trace-N` / `span-N` text.

use aml_engine::{attributes_from_json, SpanFailure, SpanId, SpanKind};
use napi::{Error, Result};
use napi_derive::napi;

use crate::guard::{engine_error, guard};
use crate::registry;

fn span_id(text: &str) -> Result<SpanId> {
    SpanId::parse(text).ok_or_else(|| Error::from_reason(format!("invalid AML span id {text:?}")))
}

pub(crate) fn attrs(json: Option<String>) -> Result<Vec<(String, aml_engine::AttrValue)>> {
    match json {
        None => Ok(Vec::new()),
        Some(text) => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| Error::from_reason(e.to_string()))?;
            Ok(attributes_from_json(&value))
        }
    }
}

/// Opens a span and returns its id.
#[napi]
pub fn open_span(
    domain: u32,
    kind: String,
    name: String,
    parent: Option<String>,
    resource: bool,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<String> {
    guard(|| {
        let kind = SpanKind::parse(&kind)
            .ok_or_else(|| Error::from_reason(format!("invalid AML span kind {kind:?}")))?;
        let parent = parent.as_deref().map(span_id).transpose()?;
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        registry::with(domain, |d| {
            Ok(
                d.open_span(kind, name, parent, resource, attributes, sensitive)
                    .to_string(),
            )
        })
    })
}

/// Closes a span; with `error_type` it ends with status error.
#[napi]
pub fn close_span(
    domain: u32,
    id: String,
    error_type: Option<String>,
    message: Option<String>,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<()> {
    guard(|| {
        let id = span_id(&id)?;
        let failure = error_type.map(|error_type| SpanFailure {
            error_type,
            message: message.unwrap_or_default(),
        });
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        registry::with(domain, |d| {
            d.close_span(id, failure, attributes, sensitive)
                .map_err(engine_error)
        })
    })
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
