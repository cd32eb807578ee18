//! Attributes the facade sends as JSON (driver-owned spans, points) into the trace model.

use std::borrow::Cow;

use crate::trace::{AttrValue, Attributes};

/// Converts a JSON object of scalar attributes (the facade's encoding) into attributes.
/// Non-scalar values are dropped: attributes are scalars by contract.
pub fn attributes_from_json(value: &serde_json::Value) -> Attributes {
    let Some(map) = value.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(map.len());
    for (key, v) in map {
        let attr = match v {
            serde_json::Value::Bool(b) => AttrValue::Bool(*b),
            serde_json::Value::Number(n) => AttrValue::Number(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => AttrValue::Text(s.clone()),
            serde_json::Value::Array(items) => AttrValue::List(
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => continue,
        };
        out.push((Cow::Owned(key.clone()), attr));
    }
    out
}
