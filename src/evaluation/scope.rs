//! Scope frames in the binding: entering a resource/action scope, reading its captured
//! input when it completes, and finishing it.

use aml_engine::{ScopeEntry, SpanKind};
use napi::{Error, Result};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::evaluation::spans::attrs;
use crate::hot_path::raw_call::JsTexts;

/// Enters the scope primitive on top of `task`. `kind` is a trace span kind ("sandbox",
/// "script", …); attributes are JSON objects of scalars.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn enter_scope(
    domain: u32,
    task: u32,
    kind: String,
    name: String,
    resource: bool,
    capture: bool,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<u32> {
    guard(|| {
        let kind = SpanKind::parse(&kind)
            .ok_or_else(|| Error::from_reason(format!("invalid AML span kind {kind:?}")))?;
        let entry = ScopeEntry {
            kind,
            name,
            resource,
            attributes: attrs(attributes)?,
            sensitive: attrs(sensitive)?,
            capture,
        };
        registry::with(domain, |d| {
            d.enter_scope(task, entry)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// `[spanId, capturedInput?]` of the scope on top after `Complete`.
#[napi(ts_return_type = "string[]")]
pub fn scope_input(domain: u32, task: u32) -> Result<JsTexts> {
    guard(|| {
        registry::with(domain, |d| {
            let (span, input) = d.scope_input(task).map_err(engine_error)?;
            let mut out = vec![span];
            out.extend(input);
            Ok(JsTexts(out))
        })
    })
}

/// Completes the scope on top: closes its span with the given end attributes and appends
/// `output` to the parent channel.
#[napi]
pub fn scope_done(
    domain: u32,
    task: u32,
    output: String,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<u32> {
    guard(|| {
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        registry::with(domain, |d| {
            d.scope_done(task, &output, attributes, sensitive)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// The message of the engine error that stopped `task`, without unwinding it.
#[napi]
pub fn error_message(domain: u32, task: u32) -> Result<String> {
    guard(|| registry::with(domain, |d| d.error_message(task).map_err(engine_error)))
}
