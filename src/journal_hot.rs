//! The journal's per-Agent and per-entry calls as plain Node-API callbacks (see
//! `src/raw_call.rs` for why), reached through `binding.journalHotPath()`.
//!
//! `journalAgent` is the whole replay of a plain-text Agent: the engine's key for the
//! Agent's position, the digest of its plan (`aml_journal::agent_digest`), the lookup in
//! the journal's native index and, when a text entry matches, the replay itself
//! (`Domain::replay_agent`). The facade then neither builds a request nor calls a provider.

use aml_engine::{AgentEntry, Domain, Op, TextAgentStart};
use aml_journal::{AgentRequest, EntryKind, Found, Indexed};
use napi::bindgen_prelude::ToNapiValue;
use napi::sys::{self, napi_callback_info, napi_env, napi_value};
use napi::{Error, Result};
use napi_derive::napi;

use crate::guard::engine_error;
use crate::raw_call::{
    args, bool_arg, f64_arg, f64_value, function_table, is_nullish, read_string, respond,
    string_value, u32_arg, u32_value, with_strings, Callback,
};
use crate::{journal_index, registry};

macro_rules! raw_callback {
    ($name:ident, |$env:ident, $info:ident| $body:block) => {
        unsafe extern "C" fn $name($env: napi_env, $info: napi_callback_info) -> napi_value {
            // SAFETY: Node passes the env and callback info of this very call, and every
            // value read through them stays live for the call.
            unsafe { respond($env, || $body) }
        }
    };
}

/// What `journalAgent` decided.
enum Step {
    /// Replayed natively: the engine's next step.
    Replayed(aml_engine::Step),
    /// The facade goes on: the key, the digest and `status` (-1: no entry, -2: diverged,
    /// n ≥ 0: a matching entry at slot n that the facade replays: structured, or with Loop
    /// state calls).
    Facade(String, String, f64),
}

fn agent_step(domain: &mut Domain, index: u32, task: u32, extra: &str) -> Result<Step> {
    let key = domain.agent_key(task).map_err(engine_error)?;
    let structured = domain.is_structured(task);
    let digest = {
        let plan = domain.agent_plan(task).map_err(engine_error)?;
        let prompt = plan.prompt();
        let system = plan.system();
        let tools: Vec<&str> = plan.tools.iter().map(|t| t.name.as_str()).collect();
        let mcp_servers: Vec<&str> = plan.mcp.iter().map(|m| m.name.as_str()).collect();
        let skills: Vec<&str> = plan.skills.iter().map(|s| s.name.as_str()).collect();
        aml_journal::agent_digest_raw(&AgentRequest {
            provider: plan.provider_name(),
            model: plan.model(),
            prompt,
            system: &system,
            follow_ups: &plan.follow_ups,
            tools: &tools,
            mcp_servers: &mcp_servers,
            skills: &skills,
            extra,
        })
    };
    journal_index::with(index, |journal| {
        let status = match journal.find_raw(&key, EntryKind::Agent, &digest) {
            // A structured Agent's recorded value goes through its schema in the facade.
            Found::Text(text, _) if !structured => {
                let code = domain
                    .replay_agent(task, &key, text)
                    .map_err(engine_error)?;
                return Ok(Step::Replayed(code));
            }
            Found::Text(_, slot) | Found::Slot(slot) => f64::from(slot),
            Found::Diverged => -2.0,
            Found::Nothing => -1.0,
        };
        // Formatted only for the facade, which records it (a replay never needs the text).
        Ok(Step::Facade(key, aml_journal::hex(&digest), status))
    })
}

// journalAgent(domain, index, task, extra) → a step code (replayed), or
// [key, digest, status] for the facade (see `Step::Facade`).
raw_callback!(journal_agent, |env, info| {
    let [domain, index, task, extra] = args::<4>(env, info)?;
    let (domain, index, task) = (
        u32_arg(env, domain)?,
        u32_arg(env, index)?,
        u32_arg(env, task)?,
    );
    let mut extra_text = String::new();
    if !is_nullish(env, extra)? {
        read_string(env, extra, &mut extra_text)?;
    }
    let step = registry::with(domain, |d| agent_step(d, index, task, &extra_text))?;
    match step {
        Step::Replayed(code) => u32_value(env, code.encode()),
        Step::Facade(key, digest, status) => facade_array(env, &key, &digest, status),
    }
});

/// `[key, digest, status]` for the facade.
///
/// # Safety
/// `env` must be the running callback's env.
unsafe fn facade_array(env: napi_env, key: &str, digest: &str, status: f64) -> Result<napi_value> {
    let mut array = std::ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_array_with_length(env, 3, &mut array) })?;
    // SAFETY: the caller's contract.
    let items = unsafe {
        [
            string_value(env, key)?,
            string_value(env, digest)?,
            f64_value(env, status)?,
        ]
    };
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: `array` and `item` are live values of env.
        check(unsafe { sys::napi_set_element(env, array, i as u32, item) })?;
    }
    Ok(array)
}

/// What `journalLocalText` decided.
enum TextStep {
    /// Replayed and finished: the task's output (the task is released).
    Finished(String),
    /// A step other than the expected one (the facade raises what its driver would).
    Stopped(u32),
    /// Entered and ready; the facade runs (and records) it: the line of
    /// [`ready_line`].
    Ready(String),
    /// The engine failed after the task was created: the facade gets the error as a value.
    Failed(String),
}

/// A JS `Error` with `message`, as `engine_error` would throw it.
///
/// # Safety
/// `env` must be the running callback's env.
unsafe fn error_value(env: napi_env, message: &str) -> Result<napi_value> {
    // SAFETY: the caller's contract.
    let text = unsafe { string_value(env, message)? };
    let mut error = std::ptr::null_mut();
    // SAFETY: `text` is a live string of env; a null code is allowed.
    check(unsafe { sys::napi_create_error(env, std::ptr::null_mut(), text, &mut error) })?;
    Ok(error)
}

/// `status \n key \n digest \n spanId \n parentSpanId \n system` (see `Step::Facade`; the
/// system text comes last because it may hold line breaks): one string for the facade to
/// slice instead of two arrays.
fn ready_line(
    domain: &mut Domain,
    task: u32,
    key: &str,
    digest: &str,
    status: f64,
) -> Result<String> {
    let plan = domain.agent_plan(task).map_err(engine_error)?;
    debug_assert!(plan.follow_ups.is_empty());
    Ok(format!(
        "{status}\n{key}\n{digest}\n{}\n{}\n{}",
        plan.span_id,
        plan.parent_span,
        plan.system()
    ))
}

fn text_agent_step(
    domain: &mut Domain,
    index: u32,
    task: u32,
    identity: u64,
    entry: AgentEntry,
    prompt: &str,
) -> Result<TextStep> {
    match domain
        .enter_text_agent(task, identity, entry, prompt)
        .map_err(engine_error)?
    {
        TextAgentStart::Ready(_) => {}
        TextAgentStart::Stopped(step) => return Ok(TextStep::Stopped(step.encode())),
    }
    match agent_step(domain, index, task, "")? {
        Step::Replayed(step) => {
            if step.op != Op::Done {
                return Ok(TextStep::Stopped(step.encode()));
            }
            Ok(TextStep::Finished(
                domain.finish(task).map_err(engine_error)?,
            ))
        }
        Step::Facade(key, digest, status) => Ok(TextStep::Ready(ready_line(
            domain, task, &key, &digest, status,
        )?)),
    }
}

// journalLocalText(domain, index, parent, identity, hasProvider, provider, prompt): the
// one-call path of `evaluate(<Agent>prompt</Agent>)` from the component on top of `parent`
// (aml_engine::TextAgentStart) in a journaled evaluation: the nested task is created,
// entered, looked up and, when a text entry matches, replayed, finished and released in
// this one call. Answers the task's output (a string); otherwise `[task, code]` (a step
// other than the expected one) or `[task, line]` (ready: see `ready_line`; the facade runs
// and records the Agent).
raw_callback!(journal_local_text, |env, info| {
    let [domain, index, parent, identity, has_provider, provider, prompt] = args::<7>(env, info)?;
    let (domain, index, parent) = (
        u32_arg(env, domain)?,
        u32_arg(env, index)?,
        u32_arg(env, parent)?,
    );
    // A JS number below 2^53 (lib/node.js numbers nodes; see `aml_engine::Identity`).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let identity = f64_arg(env, identity)? as u64;
    let provider = if is_nullish(env, provider)? {
        None
    } else {
        let mut name = String::new();
        read_string(env, provider, &mut name)?;
        Some(name)
    };
    let entry = AgentEntry {
        has_provider: bool_arg(env, has_provider)?,
        provider,
        ..AgentEntry::default()
    };
    let (task, step) = with_strings(|buffers| {
        read_string(env, prompt, &mut buffers[0])?;
        registry::with(domain, |d| {
            let task = d.new_task(Some(parent)).map_err(engine_error)?;
            // Once the task exists its failure is the facade's to handle, as a failed step
            // of a task it created (runTextAgent fails the task and rejects).
            let step = text_agent_step(d, index, task, identity, entry, &buffers[0])
                .unwrap_or_else(|error| TextStep::Failed(error.reason));
            Ok((task, step))
        })
    })?;
    match step {
        TextStep::Finished(text) => string_value(env, &text),
        TextStep::Stopped(code) => pair(env, task, u32_value(env, code)?),
        TextStep::Ready(line) => pair(env, task, string_value(env, &line)?),
        TextStep::Failed(message) => pair(env, task, error_value(env, &message)?),
    }
});

/// `[task, value]` for the facade.
///
/// # Safety
/// `env` must be the running callback's env and `value` one of its live values.
unsafe fn pair(env: napi_env, task: u32, value: napi_value) -> Result<napi_value> {
    let mut array = std::ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_array_with_length(env, 2, &mut array) })?;
    // SAFETY: the caller's contract.
    let task = unsafe { u32_value(env, task)? };
    for (i, item) in [task, value].into_iter().enumerate() {
        // SAFETY: `array` and `item` are live values of env.
        check(unsafe { sys::napi_set_element(env, array, i as u32, item) })?;
    }
    Ok(array)
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::from_reason(
            "AML journal call could not build its result",
        ))
    }
}

// journalIndexAdd(index, key, digest, kind, text, slot): files one checked entry; `text`
// is the recorded text of a plain-text Agent entry, else undefined.
raw_callback!(journal_index_add, |env, info| {
    let [index, key, digest, kind, text, slot] = args::<6>(env, info)?;
    let index = u32_arg(env, index)?;
    let (mut key_text, mut digest_text, mut kind_text) =
        (String::new(), String::new(), String::new());
    read_string(env, key, &mut key_text)?;
    read_string(env, digest, &mut digest_text)?;
    read_string(env, kind, &mut kind_text)?;
    let kind = EntryKind::parse(&kind_text)
        .ok_or_else(|| Error::from_reason("AML journal entry kind must be agent or tool"))?;
    let text = if is_nullish(env, text)? {
        None
    } else {
        let mut out = String::new();
        read_string(env, text, &mut out)?;
        Some(out)
    };
    let slot = u32_arg(env, slot)?;
    journal_index::with(index, |journal| {
        let entry = Indexed {
            kind,
            digest: digest_text,
            text,
            slot,
        };
        journal.insert(key_text, entry);
        Ok(())
    })?;
    let mut out = std::ptr::null_mut();
    check(sys::napi_get_undefined(env, &mut out))?;
    Ok(out)
});

const CALLBACKS: &[(&str, Callback)] = &[
    ("journalAgent", journal_agent),
    ("journalLocalText", journal_local_text),
    ("journalIndexAdd", journal_index_add),
];

/// The plain value the raw table is handed back as.
pub struct RawValue(napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<napi_value> {
        Ok(value.0)
    }
}

/// The journal's raw calls, by their facade names (called once by `lib/native.js`).
#[napi(ts_return_type = "Record<string, (...args: any[]) => any>")]
pub fn journal_hot_path(env: napi::Env) -> Result<RawValue> {
    // SAFETY: `env` is the env of this call; the table's functions are plain callbacks.
    unsafe { function_table(env.raw(), CALLBACKS) }.map(RawValue)
}
