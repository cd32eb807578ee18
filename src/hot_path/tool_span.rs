//! The `tool` span of one plain Tool call as two raw callbacks (see `src/hot_path/callbacks.rs`):
//! `openToolSpan(domain, name, parent)` and `closeToolSpan(domain, spanId)`. They do what
//! `openSpan(domain, "tool", name, parent, false)` and `closeSpan(domain, spanId)` do with no
//! attributes, without crossing the kind, the flag and four absent optionals on every call
//! (lib/tools/instrumentation.js takes them unless trace content is captured).

use aml_engine::SpanId;
use napi::sys::{napi_callback_info, napi_env, napi_value};

use crate::boundary::guard::engine_error;
use crate::boundary::registry;
use crate::evaluation::spans::span_id;
use crate::hot_path::raw_call::{args, read_string, respond, string_value, u32_arg, with_strings};

/// Appends `id` in its `Display` form (`trace-N` / `span-N`) without the formatting
/// machinery, which cost more than the span itself on the Agent and Tool hot paths.
pub(crate) fn push_span_id(out: &mut String, id: SpanId) {
    let (prefix, n) = match id {
        SpanId::Trace(n) => ("trace-", n),
        SpanId::Span(n) => ("span-", n),
    };
    out.push_str(prefix);
    out.push_str(itoa::Buffer::new().format(n));
}

/// Opens a `tool` span named `name` under `parent` and returns its id.
///
/// # Safety
/// Called by Node only, with the env and callback info of this very call.
pub(crate) unsafe extern "C" fn open_tool_span(
    env: napi_env,
    info: napi_callback_info,
) -> napi_value {
    // SAFETY: Node passes the env and callback info of this very call, and every value read
    // through them stays live for the call.
    unsafe {
        respond(env, || {
            let [domain, name, parent] = args::<3>(env, info)?;
            let domain = u32_arg(env, domain)?;
            let mut name_text = String::new();
            read_string(env, name, &mut name_text)?;
            let parent = with_strings(|buffers| {
                read_string(env, parent, &mut buffers[0])?;
                span_id(&buffers[0])
            })?;
            let id = registry::with(domain, |d| {
                Ok(d.open_span(
                    aml_engine::SpanKind::Tool,
                    name_text,
                    Some(parent),
                    false,
                    Vec::new(),
                    Vec::new(),
                ))
            })?;
            let mut text = String::with_capacity(24);
            push_span_id(&mut text, id);
            string_value(env, &text)
        })
    }
}

/// Closes the span `spanId` with status ok and no attributes; returns undefined.
///
/// # Safety
/// Called by Node only, with the env and callback info of this very call.
pub(crate) unsafe extern "C" fn close_tool_span(
    env: napi_env,
    info: napi_callback_info,
) -> napi_value {
    // SAFETY: as for `open_tool_span`.
    unsafe {
        respond(env, || {
            let [domain, id] = args::<2>(env, info)?;
            let domain = u32_arg(env, domain)?;
            let id = with_strings(|buffers| {
                read_string(env, id, &mut buffers[0])?;
                span_id(&buffers[0])
            })?;
            registry::with(domain, |d| {
                d.close_span(id, None, Vec::new(), Vec::new())
                    .map_err(engine_error)
            })?;
            crate::hot_path::raw_call::undefined(env)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_ids_print_as_their_display_form() {
        for id in [
            SpanId::Trace(0),
            SpanId::Trace(7),
            SpanId::Span(10),
            SpanId::Span(1_234_567),
            SpanId::Span(u64::MAX),
        ] {
            let mut text = String::new();
            push_span_id(&mut text, id);
            assert_eq!(text, id.to_string());
        }
    }
}
