//! A recording-only journaled evaluation (docs/JOURNAL.md, "Cost"): its journal is a built-in
//! memory journal with no entries (what `aml run` keeps for "re-run from here"), so no step
//! can replay and every lookup would miss. Its one-call text Agents then take the plain path
//! of an unjournaled run (`src/hot_path/callbacks.rs`: `enterTextAgent`, `finishTextAgent`)
//! and are recorded inside those two engine calls: the key, digest and `journal.step` point
//! when the Agent is entered, the answer when it lands. The journal index numbers the slots
//! itself meanwhile (`JournalIndex::number_slots`), so the facade makes no call per Agent.
//! The entries are the ones the journaled path records: same keys, digests and order. In
//! the journal a run recorder keeps for itself, the Agents' `journal.step` points are
//! made by the recorder's writer from the recorded entries, when it writes the journal.

use aml_engine::{Domain, SpanId};
use napi::{Error, Result};
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::journal::index as journal_index;
use crate::journal::plan_digest::plan_digest;

/// The one-call Agent on top of `task` was entered: in a recording-only evaluation its step
/// (key, digest, `journal.step` point) is made pending, as a journaled lookup leaves it.
pub(crate) fn begin(d: &mut Domain, task: u32) -> Result<()> {
    if d.recording_index().is_none() {
        return Ok(());
    }
    let mut step = d.take_journal_step(task).map_err(engine_error)?;
    // The one-call path's digest has no JS part, as on the journaled one-call path
    // (journalLocalText), so a later evaluation replays these entries natively.
    let outcome = plan_digest(d, task, "").and_then(|digest| {
        step.digest = digest;
        // A run recorder's own journal (its points are the record's alone): the point is
        // made by the recorder's writer from the recorded entry (crates/aml-runs), not
        // here as a trace record per Agent.
        if d.private_steps() {
            if let Ok(plan) = d.agent_plan(task) {
                if let SpanId::Span(n) = plan.span_id {
                    step.span = Some(n);
                    return Ok(());
                }
            }
        }
        d.note_live_step(task, &step.key).map_err(engine_error)
    });
    step.live = outcome.is_ok();
    d.put_journal_step(task, step);
    outcome
}

/// The one-call Agent on top of `task` landed `answer`: its pending step is recorded at the
/// index's next slot. A step the facade recorded itself (an answer with usage) is no longer
/// pending and is skipped.
pub(crate) fn record(d: &mut Domain, task: u32, answer: &str) -> Result<()> {
    let Some(index) = d.recording_index() else {
        return Ok(());
    };
    let Some(step) = d.journal_step(task) else {
        return Ok(());
    };
    journal_index::with(index, |journal| {
        let slot = journal
            .take_slot()
            .ok_or_else(|| Error::from_reason("AML journal index does not number its slots"))?;
        journal.record_step_text(slot, &step.key, step.digest, answer, step.span);
        Ok(())
    })?;
    d.end_journal_step(task);
    Ok(())
}

/// Makes evaluation `domain` recording-only into journal index `index`, which numbers its
/// slots from `from` on unless it already does (lib/journal/session.js decides: a built-in
/// memory journal with no entries).
#[napi]
pub fn journal_record_into(domain: u32, index: u32, from: u32) -> Result<()> {
    guard(|| {
        journal_index::with(index, |journal| {
            if journal.slots().is_none() {
                journal.number_slots(from);
            }
            Ok(())
        })?;
        registry::with(domain, |d| {
            d.record_steps_into(index);
            Ok(())
        })
    })
}
