//! AML's step journal kept durably in Restate (docs/DURABLE.md): one keyed Virtual Object per
//! workflow, whose handlers the `@aml-jsx/sdk/restate` entry defines (journal-object.js).
//!
//! Why through the ingress and not the invocation's own context: Restate replays an
//! invocation's journal by the *order* of its operations, and AML settles concurrent Agents
//! in whatever order they finish. Recording a step as a separate call to the object, from
//! outside the invocation's journal, never depends on that order: a retried invocation loads
//! what every earlier attempt recorded and replays it by position key, as the file and memory
//! journals do.
//!
//! This crate owns the protocol: the headers (run, attempt fence), the stored entry's shape
//! and bounds (`entry`), sealing with the workers' secret (`seal`), paged loads, and the
//! failure classes (`failure`).

mod entry;
mod failure;
mod journal;
mod page;
mod seal;

pub use entry::{entry_problem, MAX_ENTRY_BYTES, MAX_JOURNAL_BYTES, PAGE_BYTES};
pub use failure::{Failure, IngressError};
pub use journal::{IngressJournal, JournalConfig, Loaded, ATTEMPT_HEADER, RUN_HEADER};
pub use seal::MIN_SECRET_CHARS;

#[cfg(test)]
mod tests;
