//! JSON Schema fitness check for Tool input schemas and structured-output schemas.

use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::guard;

/// `null` when `json` is a valid, self-contained draft 2020-12 JSON Schema; otherwise the
/// first problem found (the facade uses it as the `cause` message). Parsing caps nesting
/// at serde_json's 128 levels, so the recursive compile below cannot exhaust the stack.
#[napi]
pub fn json_schema_problem(json: String) -> Result<Option<String>> {
    guard(|| Ok(aml_engine::json_schema_problem(&json)))
}
