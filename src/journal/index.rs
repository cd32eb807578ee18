//! Journal indexes (`aml_journal::JournalIndex`) of this JS thread, addressed by small
//! integer handles like the domains (`src/boundary/registry.rs`), so the raw replay call
//! (`src/hot_path/journal.rs`) reaches one without unwrapping a JS object. A
//! [`JournalIndexHandle`] owns its slot: the slot is freed when the handle is collected.

use std::cell::RefCell;

use crate::boundary::guard::guard;
use crate::boundary::local_slots::LocalSlots;
use aml_journal::JournalIndex;
use napi::{Error, Result};
use napi_derive::napi;

thread_local! {
    static INDEXES: RefCell<LocalSlots<JournalIndex>> = RefCell::new(LocalSlots::default());
}

fn insert() -> u32 {
    INDEXES.with(|cell| cell.borrow_mut().insert(JournalIndex::default()))
}

/// Runs `f` on index `id`; an unknown handle is a JS error, never a panic.
pub fn with<T>(id: u32, f: impl FnOnce(&mut JournalIndex) -> Result<T>) -> Result<T> {
    INDEXES.with(|cell| match cell.borrow_mut().get_mut(id) {
        Some(index) => f(index),
        None => Err(Error::from_reason("AML journal index is closed")),
    })
}

/// Live indexes (tests check that collected handles free theirs).
#[napi]
pub fn live_journal_indexes() -> Result<u32> {
    guard(|| Ok(INDEXES.with(|cell| cell.borrow().live() as u32)))
}

/// One journal's entries by key, native (see the module comment).
#[napi]
pub struct JournalIndexHandle {
    id: u32,
}

#[napi]
impl JournalIndexHandle {
    #[napi(constructor)]
    pub fn new() -> Result<Self> {
        guard(|| Ok(JournalIndexHandle { id: insert() }))
    }

    /// The handle the raw calls take.
    #[napi(getter)]
    pub fn id(&self) -> Result<u32> {
        guard(|| Ok(self.id))
    }
}

impl Drop for JournalIndexHandle {
    fn drop(&mut self) {
        let id = self.id;
        // During thread teardown the table may already be gone: nothing left to free.
        let _ = INDEXES.try_with(|cell| {
            if let Ok(mut indexes) = cell.try_borrow_mut() {
                indexes.remove(id);
            }
        });
    }
}

/// The number of slots of index `index`'s list while it numbers them, or -1; with `take`,
/// the next slot is taken (the facade's own entry goes there: lib/journal/entry-index.js).
#[napi]
pub fn journal_index_slots(index: u32, take: bool) -> Result<i64> {
    guard(|| {
        with(index, |journal| {
            let slots = if take {
                journal.take_slot()
            } else {
                journal.slots()
            };
            Ok(slots.map_or(-1, i64::from))
        })
    })
}
