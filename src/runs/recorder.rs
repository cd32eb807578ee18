//! The run recorder (`aml_runs::Recorder`, docs/STUDIO.md "Cost") as handles: a recorder per
//! `recordRuns` call, and per recorded evaluation a tap attached to its domain, so the
//! engine's trace records go to the recorder's writer thread without visiting JS.

use std::path::PathBuf;

use aml_runs::{Recorder, RunJournal};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::{Map, Value};

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::handles::Handles;
use crate::boundary::registry;

static RECORDERS: Handles<Recorder> = Handles::new();

fn failure(error: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, error.to_string())
}

fn recorder(handle: u32) -> Result<std::sync::Arc<Recorder>> {
    RECORDERS
        .get(handle)
        .ok_or_else(|| Error::from_reason("AML run recorder is closed"))
}

fn object(text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Error::from_reason("AML run metadata must be a JSON object")),
    }
}

/// A recorder of runs beneath `runs` (events capped at `max_bytes`; sensitive attributes
/// only with `content`), with its writer thread.
#[napi]
pub fn runs_recorder_create(runs: String, max_bytes: f64, content: bool) -> Result<u32> {
    guard(|| {
        // A JS number; the cap is a byte count well inside f64's exact integers.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let max = max_bytes as u64;
        let recorder = Recorder::new(PathBuf::from(runs), max, content).map_err(failure)?;
        Ok(RECORDERS.insert(recorder))
    })
}

/// Starts recording run `id` of evaluation `domain` (its directory, `meta`) and attaches the
/// tap; `private_steps`: the evaluation's journal is the recorder's own, so its `journal.step`
/// points go to the tap alone. Returns the run's key for `runsRecorderFinish`/`…Close`.
#[napi]
pub fn runs_recorder_start(
    recorder_id: u32,
    domain: u32,
    id: String,
    meta: String,
    private_steps: bool,
) -> Result<f64> {
    guard(|| {
        let recorder = recorder(recorder_id)?;
        let (run, tap) = recorder.start(&id, object(&meta)?).map_err(failure)?;
        registry::with(domain, |d| {
            d.set_trace_tap(Some(Box::new(tap)));
            d.set_private_steps(private_steps);
            Ok(())
        })?;
        // Run keys count up from 1 per recorder: far inside f64's exact integers.
        #[allow(clippy::cast_precision_loss)]
        Ok(run as f64)
    })
}

/// Merges `patch` (a JSON object) into run `run`'s metadata, written when it closes.
#[napi]
pub fn runs_recorder_finish(recorder_id: u32, run: f64, patch: String) -> Result<()> {
    guard(|| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        recorder(recorder_id)?.finish(run as u64, object(&patch)?);
        Ok(())
    })
}

/// Keeps the journal of run `run` (of `workflow`, `count` entries): `lines[i]` is the record
/// line of entry `slots[i]` as the facade wrote it; every other entry is an answer recorded
/// natively in journal index `index`, copied from there whole (no string per entry crosses
/// the boundary). Formatted and written by the writer.
#[napi]
pub fn runs_recorder_journal(
    recorder_id: u32,
    run: f64,
    index: Option<u32>,
    workflow: String,
    count: u32,
    slots: Vec<u32>,
    lines: Vec<String>,
) -> Result<()> {
    guard(|| {
        let recorder = recorder(recorder_id)?;
        let native = match index {
            None => aml_journal::RecordedCopy::default(),
            Some(index) => {
                crate::journal::index::with(index, |journal| Ok(journal.recorded_copy()))?
            }
        };
        let journal = RunJournal {
            workflow,
            count,
            lines: slots.into_iter().zip(lines).collect(),
            native,
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        recorder.journal(run as u64, journal);
        Ok(())
    })
}

/// Detaches run `run`'s tap from `domain`; the Promise resolves once the run's record is
/// complete on disk, with why recording stopped early if it did. The JS thread never waits
/// for the writer (the Promise keeps Node running until the record is complete).
#[napi(ts_return_type = "Promise<string | null>")]
pub fn runs_recorder_close(
    env: &Env,
    recorder_id: u32,
    domain: u32,
    run: f64,
) -> Result<Object<'_>> {
    let (recorder, run) = guard(|| {
        // The domain may be gone already; its tap went with it.
        let _ = registry::with(domain, |d| {
            d.set_trace_tap(None);
            Ok(())
        });
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok((recorder(recorder_id)?, run as u64))
    })?;
    spawn_promise(
        env,
        async move {
            tokio::task::spawn_blocking(move || recorder.close(run))
                .await
                .map_err(failure)
        },
        |_, problem| Ok(problem),
    )
}

/// Frees a recorder; its writer ends once the runs still attached have closed.
#[napi]
pub fn runs_recorder_dispose(recorder_id: u32) -> Result<()> {
    guard(|| {
        RECORDERS.remove(recorder_id);
        Ok(())
    })
}
