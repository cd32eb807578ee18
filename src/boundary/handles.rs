//! Native objects handed to JS as small integer handles: processes, sessions, leases, locks,
//! bodies. One table type for all of them, so every kind allocates, looks up and frees its
//! handles the same way (nonzero, not reused while live, a poisoned lock still usable).
//!
//! Three tables keep another shape, on purpose: the evaluation domains (`registry.rs`) and
//! journal indexes (`src/journal/index.rs`) are thread-local slot vectors on the hot path,
//! reached without a lock (one type for both, `local_slots.rs`); the MCP bridges
//! (`src/acp/bridges.rs`) are polled mutably on the JS thread's loop.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) struct Handles<T> {
    slots: Mutex<Slots<T>>,
}

struct Slots<T> {
    live: BTreeMap<u32, Arc<T>>,
    next: u32,
    /// Handles stay below this (the ACP sessions leave the high bit to relay ports).
    limit: u32,
}

impl<T> Handles<T> {
    /// An empty table whose handles are 1..=u32::MAX.
    pub(crate) const fn new() -> Self {
        Self::below(u32::MAX)
    }

    /// An empty table whose handles are 1..limit.
    pub(crate) const fn below(limit: u32) -> Self {
        Handles {
            slots: Mutex::new(Slots {
                live: BTreeMap::new(),
                next: 0,
                limit,
            }),
        }
    }

    fn slots(&self) -> MutexGuard<'_, Slots<T>> {
        // A panic while the lock was held (caught by guard()) leaves the map consistent:
        // every operation below is one map call.
        self.slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Files `value` under a fresh handle.
    pub(crate) fn insert(&self, value: T) -> u32 {
        self.insert_shared(Arc::new(value))
    }

    /// Files an already shared `value` under a fresh handle.
    pub(crate) fn insert_shared(&self, value: Arc<T>) -> u32 {
        let mut slots = self.slots();
        let limit = slots.limit;
        let id = loop {
            slots.next = slots.next.wrapping_add(1) % limit;
            if slots.next != 0 && !slots.live.contains_key(&slots.next) {
                break slots.next;
            }
        };
        slots.live.insert(id, value);
        id
    }

    /// Files `value` under `id`, a handle chosen elsewhere (replacing any value there).
    pub(crate) fn insert_at(&self, id: u32, value: Arc<T>) {
        self.slots().live.insert(id, value);
    }

    pub(crate) fn get(&self, id: u32) -> Option<Arc<T>> {
        self.slots().live.get(&id).cloned()
    }

    pub(crate) fn remove(&self, id: u32) -> Option<Arc<T>> {
        self.slots().live.remove(&id)
    }

    /// Live handles (the leak checks of the tests count them).
    pub(crate) fn len(&self) -> usize {
        self.slots().live.len()
    }

    /// Live values for which `keep` holds.
    pub(crate) fn count_where(&self, keep: impl Fn(&T) -> bool) -> usize {
        self.slots()
            .live
            .values()
            .filter(|value| keep(value))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_nonzero_fresh_and_freed() {
        let table = Handles::new();
        let a = table.insert("a");
        let b = table.insert("b");
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(table.get(a).as_deref(), Some(&"a"));
        assert_eq!(table.remove(a).as_deref(), Some(&"a"));
        assert!(table.get(a).is_none());
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn a_bounded_table_wraps_below_its_limit_and_skips_live_handles() {
        let table = Handles::below(4);
        let ids: Vec<u32> = (0..3).map(|i| table.insert(i)).collect();
        assert_eq!(ids, [1, 2, 3]);
        table.remove(2);
        assert_eq!(table.insert(9), 2);
    }
}
