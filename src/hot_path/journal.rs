//! The journal's per-Agent and per-entry calls as plain Node-API callbacks (see
//! `src/hot_path/raw_call.rs` for why), reached through `binding.journalHotPath()`.
//!
//! `journalAgent` is the whole replay of a plain-text Agent: the engine's key for the
//! Agent's position, the digest of its plan (`aml_journal::agent_digest`), the lookup in
//! the journal's native index and, when a text entry matches, the replay itself
//! (`Domain::replay_agent`). The facade then neither builds a request nor calls a provider.

use aml_engine::{AgentEntry, Domain, JournalStep, Op, TextAgentStart};
use aml_journal::{EntryKind, Found, Indexed};
use napi::bindgen_prelude::ToNapiValue;
use napi::sys::{self, napi_callback_info, napi_env, napi_value};
use napi::{Error, Result};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::hot_path::raw_call::{
    args, bool_arg, f64_arg, f64_value, function_table, is_nullish, optional_string, raw_callback,
    read_string, respond, string_value, u32_arg, u32_value, with_strings, Callback,
};
use crate::journal::index as journal_index;
use crate::journal::plan_digest::plan_digest;

/// What `journalAgent` decided.
enum Step {
    /// Replayed natively: the engine's next step.
    Replayed(aml_engine::Step),
    /// The facade goes on with `status`: -1 (no entry), -2 (an entry for another request:
    /// a divergence), or n ≥ 0 (a matching entry at slot n that the facade replays:
    /// structured, or with Loop state calls). The key and digest stay in the engine as the
    /// task's pending journal step (`aml_engine::JournalStep`): the common recording
    /// (`journalRecordText`) never needs them as JS strings.
    Facade(i64),
}

fn agent_step(domain: &mut Domain, index: u32, task: u32, extra: &str) -> Result<Step> {
    let mut step = domain.take_journal_step(task).map_err(engine_error)?;
    let outcome = look_up(domain, index, task, extra, &mut step);
    domain.put_journal_step(task, step);
    outcome
}

fn look_up(
    domain: &mut Domain,
    index: u32,
    task: u32,
    extra: &str,
    step: &mut JournalStep,
) -> Result<Step> {
    let structured = domain.is_structured(task);
    step.digest = plan_digest(domain, task, extra)?;
    journal_index::with(index, |journal| {
        let status = match journal.find_raw(&step.key, EntryKind::Agent, &step.digest) {
            // A structured Agent's recorded value goes through its schema in the facade.
            Found::Text(text, _) if !structured => {
                let code = domain
                    .replay_agent(task, &step.key, text)
                    .map_err(engine_error)?;
                return Ok(Step::Replayed(code));
            }
            Found::Text(_, slot) | Found::Slot(slot) => i64::from(slot),
            Found::Diverged => -2,
            Found::Nothing => -1,
        };
        domain
            .note_live_step(task, &step.key)
            .map_err(engine_error)?;
        step.live = true;
        Ok(Step::Facade(status))
    })
}

// journalAgent(domain, index, task, extra) → a step code (≥ 0: replayed), or the facade's
// status (see `Step::Facade`) as a negative number: -1, -2, or -3 - slot.
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
        // Slots are below 2^32, so every status is exact as a JS number.
        #[allow(clippy::cast_precision_loss)]
        Step::Facade(status) => f64_value(
            env,
            if status >= 0 {
                -3.0 - status as f64
            } else {
                status as f64
            },
        ),
    }
});

/// What `journalLocalText` decided. It answers one string either way (see [`answer`]): a
/// JS array built through Node-API cost more than the rest of a recorded Agent's entry.
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

/// The mark that starts every answer of `journalLocalText` other than a replayed text that
/// does not itself start with it: NUL, then a letter for the kind (see [`answer`]).
const MARK: char = '\0';

/// `\0R<task> \n status \n spanId \n parentSpanId \n system` (see `Step::Facade`): the
/// task, the status, then the line of the plain one-call path
/// (`hot_path::push_text_agent_line`; the system text comes last: it may hold line breaks).
fn ready_line(domain: &mut Domain, task: u32, status: i64) -> Result<String> {
    let plan = domain.agent_plan(task).map_err(engine_error)?;
    let mut line = String::with_capacity(64);
    marked(&mut line, 'R', task);
    line.push_str(itoa::Buffer::new().format(status));
    line.push('\n');
    crate::hot_path::callbacks::push_text_agent_line(&mut line, plan);
    Ok(line)
}

/// Starts `out` with the mark, `kind` and `task \n`.
fn marked(out: &mut String, kind: char, task: u32) {
    out.push(MARK);
    out.push(kind);
    out.push_str(itoa::Buffer::new().format(task));
    out.push('\n');
}

/// The one string `journalLocalText` answers (lib/journal/agent.js, enterLocalText):
/// - a replayed text, as it is, unless it starts with the mark: then `\0T` and the text;
/// - `\0R…` when the Agent is ready to run and record ([`ready_line`]);
/// - `\0S<task> \n <step code>` for a step other than the expected one;
/// - `\0F<task> \n <message>` when the engine failed after creating the task.
fn answer(task: u32, step: TextStep) -> String {
    match step {
        TextStep::Finished(text) if !text.starts_with(MARK) => text,
        TextStep::Finished(text) => format!("{MARK}T{text}"),
        TextStep::Ready(line) => line,
        TextStep::Stopped(code) => {
            let mut out = String::new();
            marked(&mut out, 'S', task);
            out.push_str(itoa::Buffer::new().format(code));
            out
        }
        TextStep::Failed(message) => {
            let mut out = String::new();
            marked(&mut out, 'F', task);
            out.push_str(&message);
            out
        }
    }
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
        Step::Facade(status) => Ok(TextStep::Ready(ready_line(domain, task, status)?)),
    }
}

// journalLocalText(domain, index, parent, identity, hasProvider, provider, prompt): the
// one-call path of `evaluate(<Agent>prompt</Agent>)` from the component on top of `parent`
// (aml_engine::TextAgentStart) in a journaled evaluation: the nested task is created,
// entered, looked up and, when a text entry matches, replayed, finished and released in
// this one call. Answers one string (see `answer`): the task's output, or what the facade
// needs to run and record the Agent, or to fail the task.
raw_callback!(journal_local_text, |env, info| {
    let [domain, index, parent, identity, has_provider, provider, prompt] = args::<7>(env, info)?;
    let (domain, index, parent) = (
        u32_arg(env, domain)?,
        u32_arg(env, index)?,
        u32_arg(env, parent)?,
    );
    // A JS number below 2^53 (lib/core/node.js numbers nodes; see `aml_engine::Identity`).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let identity = f64_arg(env, identity)? as u64;
    let provider = optional_string(env, provider)?;
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
    string_value(env, &answer(task, step))
});

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
    let text = optional_string(env, text)?;
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

// journalRecordText(domain, index, task, text, slot): records the plain-text answer of the
// Agent on top of `task`, whose lookup left its key and digest in the engine, into journal
// index `index` at `slot` (a built-in memory journal: docs/JOURNAL.md, "Cost").
raw_callback!(journal_record_text, |env, info| {
    let [domain, index, task, text, slot] = args::<5>(env, info)?;
    let (domain, index, task, slot) = (
        u32_arg(env, domain)?,
        u32_arg(env, index)?,
        u32_arg(env, task)?,
        u32_arg(env, slot)?,
    );
    with_strings(|buffers| {
        read_string(env, text, &mut buffers[0])?;
        registry::with(domain, |d| {
            record_pending(d, index, task, slot, &buffers[0])
        })
    })?;
    let mut out = std::ptr::null_mut();
    check(sys::napi_get_undefined(env, &mut out))?;
    Ok(out)
});

// journalRecordFinish(domain, index, task, text, traced, slot): the one-call Agent's result
// (`finishTextAgent` with `text` as the trace output when `traced`), then journalRecordText,
// in the same call: the step code. The common recording of `evaluate(<Agent>prompt</Agent>)`
// into a built-in memory journal reads the answer once and crosses once.
raw_callback!(journal_record_finish, |env, info| {
    let [domain, index, task, text, traced, slot] = args::<6>(env, info)?;
    let (domain, index, task, slot) = (
        u32_arg(env, domain)?,
        u32_arg(env, index)?,
        u32_arg(env, task)?,
        u32_arg(env, slot)?,
    );
    let traced = bool_arg(env, traced)?;
    let step = with_strings(|buffers| {
        read_string(env, text, &mut buffers[0])?;
        let answer = &buffers[0];
        registry::with(domain, |d| {
            // Landed first: when the engine cannot take it at all (a closed or released
            // task) nothing is recorded, so the facade has no slot to account for. A step
            // that lands and then fails the evaluation is recorded, as before it fails.
            let step = d
                .finish_text_agent(task, answer, if traced { answer } else { "" })
                .map_err(engine_error)?;
            record_pending(d, index, task, slot, answer)?;
            Ok(step)
        })
    })?;
    u32_value(env, step.encode())
});

/// Files the pending step of `task` with `answer` at `slot` of journal index `index`.
fn record_pending(d: &mut Domain, index: u32, task: u32, slot: u32, answer: &str) -> Result<()> {
    let step = d
        .journal_step(task)
        .ok_or_else(|| Error::from_reason(NO_STEP))?;
    journal_index::with(index, |journal| {
        // Once the index numbers the slots (since a recording-only evaluation), the facade's
        // list caught up with it just before this call: the next slot is the one it passed.
        let slot = journal.take_slot().unwrap_or(slot);
        journal.record_text(slot, &step.key, step.digest, answer);
        Ok(())
    })?;
    d.end_journal_step(task);
    Ok(())
}

const NO_STEP: &str = "AML journal step is not pending";

/// `[key, digest]` of the pending journal step of the Agent on top of `task`; with `end`, the
/// step is no longer pending.
fn step_identity(domain: u32, task: u32, end: bool) -> Result<Vec<String>> {
    crate::boundary::guard::guard(|| {
        registry::with(domain, |d| {
            let step = d
                .journal_step(task)
                .ok_or_else(|| Error::from_reason(NO_STEP))?;
            let identity = vec![step.key.clone(), aml_journal::hex(&step.digest)];
            if end {
                d.end_journal_step(task);
            }
            Ok(identity)
        })
    })
}

/// `[key, digest]` of the pending journal step of the Agent on top of `task` (see
/// `Step::Facade`), for the paths that need them as text: a divergence event, a replay in
/// the facade, recording into a journal object of the application's.
#[napi]
pub fn journal_step(domain: u32, task: u32) -> Result<Vec<String>> {
    step_identity(domain, task, false)
}

/// [`journal_step`], and the step is no longer pending: the facade records it itself (a
/// recording-only evaluation's one-call answer with usage, src/hot_path/recorded_steps.rs).
#[napi]
pub fn journal_step_take(domain: u32, task: u32) -> Result<Vec<String>> {
    step_identity(domain, task, true)
}

/// `[key, digest, text]` of the answer recorded natively at `slot` of journal index `index`
/// (the facade makes it an entry object when someone reads it).
#[napi]
pub fn journal_index_recorded(index: u32, slot: u32) -> Result<Vec<String>> {
    crate::boundary::guard::guard(|| {
        journal_index::with(index, |journal| {
            let recorded = journal
                .recorded(slot)
                .ok_or_else(|| Error::from_reason("AML journal entry is not recorded"))?;
            Ok(vec![
                recorded.key.to_string(),
                aml_journal::hex(recorded.digest),
                recorded.text.to_string(),
            ])
        })
    })
}

/// Files the answers recorded natively at slots `from..to` of journal index `index` (see
/// `JournalIndex::file_recorded`): the index then finds them like appended entries.
#[napi]
pub fn journal_index_file_recorded(index: u32, from: u32, to: u32) -> Result<()> {
    crate::boundary::guard::guard(|| {
        journal_index::with(index, |journal| {
            for slot in from..to {
                if !journal.file_recorded(slot) {
                    return Err(Error::from_reason("AML journal entry is not recorded"));
                }
            }
            Ok(())
        })
    })
}

const CALLBACKS: &[(&str, Callback)] = &[
    ("journalAgent", journal_agent),
    ("journalLocalText", journal_local_text),
    ("journalIndexAdd", journal_index_add),
    ("journalRecordText", journal_record_text),
    ("journalRecordFinish", journal_record_finish),
];

/// The plain value the raw table is handed back as.
pub struct RawValue(napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<napi_value> {
        Ok(value.0)
    }
}

/// The journal's raw calls, by their facade names (called once by `lib/core/native.js`).
#[napi(ts_return_type = "Record<string, (...args: any[]) => any>")]
pub fn journal_hot_path(env: napi::Env) -> Result<RawValue> {
    // SAFETY: `env` is the env of this call; the table's functions are plain callbacks.
    guard(|| unsafe { function_table(env.raw(), CALLBACKS) }.map(RawValue))
}
