//! A journal kept in a Restate Virtual Object (`aml_restate::IngressJournal`, docs/DURABLE.md),
//! by handle: `lib/durable/restate-journal.js` opens one per workflow attempt and closes it
//! when the evaluation settles. Failures resolve as `{ failure, message }` JSON rather than
//! rejecting, so their class (`aml_restate::Failure`) reaches JavaScript as the error's `code`.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use aml_restate::{IngressError, IngressJournal, JournalConfig};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;

#[derive(Default)]
struct Journals {
    live: HashMap<u32, Arc<IngressJournal>>,
    next: u32,
}

static JOURNALS: LazyLock<Mutex<Journals>> = LazyLock::new(Default::default);

fn journals<R>(f: impl FnOnce(&mut Journals) -> R) -> R {
    f(&mut JOURNALS.lock().unwrap_or_else(|p| p.into_inner()))
}

fn journal(handle: u32) -> Result<Arc<IngressJournal>> {
    journals(|j| j.live.get(&handle).cloned())
        .ok_or_else(|| Error::from_reason("AML Restate journal handle is closed"))
}

/// What `restateJournalOpen` takes (checked in JS first, with the documented messages).
#[napi(object)]
pub struct RestateJournalOptions {
    pub ingress: String,
    pub object: String,
    pub key: String,
    /// `[name, value]` pairs sent with every request.
    pub headers: Vec<Vec<String>>,
    pub timeout_ms: u32,
    pub secret: String,
    pub run: String,
    pub attempt: Option<String>,
}

/// The protocol's names and bounds, for the journal object and the docs' checks.
#[napi(object)]
pub struct RestateJournalProtocol {
    pub attempt_header: String,
    pub run_header: String,
    pub page_bytes: u32,
    pub max_entry_bytes: u32,
    pub max_journal_bytes: f64,
    pub min_secret_chars: u32,
}

#[napi]
pub fn restate_journal_protocol() -> Result<RestateJournalProtocol> {
    guard(|| {
        Ok(RestateJournalProtocol {
            attempt_header: aml_restate::ATTEMPT_HEADER.to_owned(),
            run_header: aml_restate::RUN_HEADER.to_owned(),
            page_bytes: aml_restate::PAGE_BYTES as u32,
            max_entry_bytes: aml_restate::MAX_ENTRY_BYTES as u32,
            max_journal_bytes: aml_restate::MAX_JOURNAL_BYTES as f64,
            min_secret_chars: aml_restate::MIN_SECRET_CHARS as u32,
        })
    })
}

/// Why the stored entry `json` breaks the one shape rule, or null when it keeps it.
#[napi]
pub fn restate_journal_entry_problem(json: String) -> Result<Option<String>> {
    guard(|| Ok(aml_restate::entry_problem(&json)))
}

/// Opens one run's journal; returns its handle.
#[napi]
pub fn restate_journal_open(options: RestateJournalOptions) -> Result<u32> {
    guard(|| {
        let headers = options
            .headers
            .into_iter()
            .map(|pair| match <[String; 2]>::try_from(pair) {
                Ok([name, value]) => Ok((name, value)),
                Err(_) => Err(Error::new(
                    Status::InvalidArg,
                    "headers must be [name, value] pairs",
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let opened = IngressJournal::new(JournalConfig {
            ingress: options.ingress,
            object: options.object,
            workflow: options.key,
            headers,
            timeout: Duration::from_millis(u64::from(options.timeout_ms.max(1))),
            secret: options.secret,
            run: options.run,
            attempt: options.attempt,
        })
        .map_err(|error| Error::new(Status::InvalidArg, error.to_string()))?;
        Ok(journals(|j| {
            loop {
                j.next = j.next.wrapping_add(1);
                if j.next != 0 && !j.live.contains_key(&j.next) {
                    break;
                }
            }
            j.live.insert(j.next, Arc::new(opened));
            j.next
        }))
    })
}

/// `{"failure": <code>, "message": <text>}`.
fn failure(journal: &IngressJournal, error: &IngressError) -> String {
    serde_json::json!({
        "failure": error.failure().code(),
        "message": error.explained(journal.object()),
    })
    .to_string()
}

/// `{"entries": [...], "ignored": n}` or a failure.
#[napi(ts_return_type = "Promise<string>")]
pub fn restate_journal_load(env: &Env, handle: u32) -> Result<Object<'_>> {
    let journal = guard(|| journal(handle))?;
    spawn_promise(
        env,
        async move {
            Ok(match journal.load().await {
                Ok(loaded) => format!(
                    r#"{{"ignored":{},"entries":{}}}"#,
                    loaded.ignored, loaded.entries
                ),
                Err(error) => failure(&journal, &error),
            })
        },
        |_, text| Ok(text),
    )
}

/// Records one entry (JSON text); resolves with null once Restate stored it, or a failure.
#[napi(ts_return_type = "Promise<string | null>")]
pub fn restate_journal_record(env: &Env, handle: u32, entry: String) -> Result<Object<'_>> {
    let journal = guard(|| journal(handle))?;
    spawn_promise(
        env,
        async move {
            Ok(match journal.record(&entry).await {
                Ok(()) => None,
                Err(error) => Some(failure(&journal, &error)),
            })
        },
        |_, outcome| Ok(outcome),
    )
}

/// Forgets the handle (requests in flight finish on their own).
#[napi]
pub fn restate_journal_close(handle: u32) -> Result<()> {
    guard(|| {
        journals(|j| j.live.remove(&handle));
        Ok(())
    })
}
