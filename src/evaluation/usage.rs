//! Token usage across the wall (issue 37): the binding only classifies the provider's
//! `usage` value field by field; the engine validates, sums and budgets it
//! (`aml_engine::Usage`).

use aml_engine::{BadUsage, Reported, Usage, USAGE_FIELDS};
use napi::bindgen_prelude::{JsObjectValue, Object, Unknown};
use napi::{Result, ValueType};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;

/// The five fields of `usage` as the engine takes them; `None`: `usage` is not an object.
fn classify(usage: &Unknown<'_>) -> Result<Option<[Reported; 5]>> {
    if usage.get_type()? != ValueType::Object {
        return Ok(None);
    }
    // SAFETY: the value's type was checked to be an object just above.
    let object: Object<'_> = unsafe { usage.cast()? };
    let mut values = [Reported::Absent; 5];
    for (slot, name) in values.iter_mut().zip(USAGE_FIELDS) {
        let value: Unknown<'_> = object.get_named_property(name)?;
        *slot = match value.get_type()? {
            ValueType::Undefined => Reported::Absent,
            // SAFETY: the value's type was checked to be a number.
            ValueType::Number => Reported::Number(unsafe { value.cast::<f64>()? }),
            _ => Reported::NotANumber,
        };
    }
    Ok(Some(values))
}

/// The provider of the ready Agent on top of `task` answered with `usage` (not undefined or
/// null). Validated by the engine; a bad value fails the Agent at its `agentDone`. Returns the
/// `maxTokens` message when this usage reaches the budget (the facade then stops the
/// evaluation with it), else `null`.
#[napi]
pub fn agent_usage(domain: u32, task: u32, usage: Unknown<'_>) -> Result<Option<String>> {
    guard(|| {
        let reported = classify(&usage)?;
        registry::with(domain, |d| {
            d.agent_usage(task, reported)
                .map(|reached| reached.map(|e| e.to_string()))
                .map_err(engine_error)
        })
    })
}

/// The evaluation's summed usage as the public object, or `undefined` when no provider
/// reported any.
#[napi]
pub fn evaluation_usage(domain: u32) -> Result<Option<serde_json::Value>> {
    guard(|| registry::with(domain, |d| Ok(public(&d.usage()))))
}

/// `normalizeUsage`: `usage` (an object) validated into only its reported fields, or the
/// engine's message for the first bad field (the facade throws it as a TypeError).
#[napi]
pub fn normalize_usage(usage: Unknown<'_>) -> Result<Option<serde_json::Value>> {
    guard(|| {
        let checked = match classify(&usage)? {
            Some(values) => Usage::from_reported(values),
            None => Err(BadUsage(None)),
        };
        match checked {
            Ok(usage) => Ok(public(&usage)),
            Err(bad) => Err(napi::Error::from_reason(bad.to_string())),
        }
    })
}

/// The field-by-field sum of `usages` (the turns of one ACP session), validated like
/// [`normalize_usage`]; `undefined` when none reports anything.
#[napi]
pub fn sum_usage(usages: Vec<Unknown<'_>>) -> Result<Option<serde_json::Value>> {
    guard(|| {
        let mut sum = Usage::default();
        for usage in &usages {
            let checked = match classify(usage)? {
                Some(values) => Usage::from_reported(values),
                None => Err(BadUsage(None)),
            };
            let usage = checked.map_err(|bad| napi::Error::from_reason(bad.to_string()))?;
            sum.add(&usage);
        }
        Ok(public(&sum))
    })
}

fn public(usage: &Usage) -> Option<serde_json::Value> {
    (!usage.is_empty()).then(|| serde_json::to_value(usage).unwrap_or_default())
}
