//! A journal kept in a Restate Virtual Object (`aml_restate::IngressJournal`, docs/DURABLE.md),
//! by handle: `lib/durable/restate-journal.js` opens one per workflow invocation and closes it
//! when the evaluation settles.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use aml_restate::IngressJournal;
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

/// Opens the journal object `object` keyed `key` behind `ingress`; `headers` are
/// `[name, value]` pairs sent with every request.
#[napi]
pub fn restate_journal_open(
    ingress: String,
    object: String,
    key: String,
    headers: Vec<Vec<String>>,
    timeout_ms: u32,
) -> Result<u32> {
    guard(|| {
        let headers = headers
            .into_iter()
            .map(|pair| match <[String; 2]>::try_from(pair) {
                Ok([name, value]) => Ok((name, value)),
                Err(_) => Err(Error::new(
                    Status::InvalidArg,
                    "headers must be [name, value] pairs",
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let timeout = Duration::from_millis(u64::from(timeout_ms.max(1)));
        let opened = IngressJournal::new(&ingress, &object, &key, headers, timeout)
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

/// Every entry recorded so far, as a JSON array's text.
#[napi(ts_return_type = "Promise<string>")]
pub fn restate_journal_load(env: &Env, handle: u32) -> Result<Object<'_>> {
    let journal = journal(handle)?;
    spawn_promise(
        env,
        async move {
            journal
                .load()
                .await
                .map_err(|error| Error::from_reason(error.to_string()))
        },
        |_, text| Ok(text),
    )
}

/// Records one entry (JSON text); resolves once Restate stored it.
#[napi(ts_return_type = "Promise<void>")]
pub fn restate_journal_record(env: &Env, handle: u32, entry: String) -> Result<Object<'_>> {
    let journal = journal(handle)?;
    spawn_promise(
        env,
        async move {
            journal
                .record(entry)
                .await
                .map_err(|error| Error::from_reason(error.to_string()))
        },
        |_, ()| Ok(()),
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
