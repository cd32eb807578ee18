//! Identities of the arrays and nodes on an active branch (cycle detection).
//!
//! The facade numbers its own nodes when it creates them and every other object when it
//! first meets it, in two disjoint sequences, so identities are 64-bit: a long-lived server
//! never wraps around into a false cycle. The set is probed on every array and node the
//! engine enters, so it hashes with one multiply instead of SipHash: the keys come from the
//! facade's counters, not from an attacker.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// An array's or node's identity, as the facade assigned it.
pub type Identity = u64;

/// How many identities an [`ActiveSet`] keeps inline before it spills into a hash table.
const INLINE: usize = 4;

/// The identities active on one task's branch. Most nested tasks are one Agent or a short
/// branch, so the first few identities live inline in the task (no allocation, a linear
/// probe of at most four words); a deeper branch spills into a hash table. A fanned-out
/// Agent's task then costs one allocation less while it is in flight.
#[derive(Debug, Default)]
pub(crate) struct ActiveSet {
    inline: [Identity; INLINE],
    len: u8,
    spilled: Option<HashSet<Identity, CounterHash>>,
    /// Bumped by every change, so a snapshot of the set can be reused until the next one.
    generation: u32,
}

impl ActiveSet {
    pub(crate) fn contains(&self, identity: &Identity) -> bool {
        match &self.spilled {
            Some(set) => set.contains(identity),
            None => self.inline[..usize::from(self.len)].contains(identity),
        }
    }

    /// Changes with every insert, removal or clear (wrapping: a snapshot is never kept that long).
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// Adds `identity`; false when it was there already.
    pub(crate) fn insert(&mut self, identity: Identity) -> bool {
        self.generation = self.generation.wrapping_add(1);
        if let Some(set) = &mut self.spilled {
            return set.insert(identity);
        }
        if self.contains(&identity) {
            return false;
        }
        let len = usize::from(self.len);
        if len < INLINE {
            self.inline[len] = identity;
            self.len += 1;
            return true;
        }
        let mut set: HashSet<Identity, CounterHash> = self.inline.iter().copied().collect();
        set.insert(identity);
        self.spilled = Some(set);
        self.len = 0;
        true
    }

    /// Removes `identity`; false when it was not there.
    pub(crate) fn remove(&mut self, identity: &Identity) -> bool {
        self.generation = self.generation.wrapping_add(1);
        if let Some(set) = &mut self.spilled {
            return set.remove(identity);
        }
        let len = usize::from(self.len);
        match self.inline[..len].iter().position(|id| id == identity) {
            Some(at) => {
                self.inline.copy_within(at + 1..len, at);
                self.len -= 1;
                true
            }
            None => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.len = 0;
        self.spilled = None;
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Identity> {
        let (inline, spilled) = match &self.spilled {
            Some(set) => (&self.inline[..0], Some(set.iter())),
            None => (&self.inline[..usize::from(self.len)], None),
        };
        inline.iter().chain(spilled.into_iter().flatten())
    }

    pub(crate) fn extend(&mut self, identities: impl IntoIterator<Item = Identity>) {
        for identity in identities {
            self.insert(identity);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match &self.spilled {
            Some(set) => set.len(),
            None => usize::from(self.len),
        }
    }
}

/// The hasher of the engine's counter-keyed tables (identities, span ids).
pub(crate) type CounterHash = BuildHasherDefault<IdentityHasher>;

#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used for identities; other keys still hash deterministically.
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_usize(&mut self, value: usize) {
        // Enum discriminants (`SpanId`'s derived Hash) arrive here.
        self.write_u64(value as u64);
    }

    fn write_isize(&mut self, value: isize) {
        self.write_u64(value as u64);
    }

    fn write_u64(&mut self, value: u64) {
        // Fibonacci hashing spreads consecutive counters over the table's high bits.
        self.0 = (self.0 ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_stay_inline_and_spill_past_four() {
        let mut set = ActiveSet::default();
        assert!(set.insert(7) && set.insert(8));
        assert!(!set.insert(7));
        assert!(set.contains(&8) && !set.contains(&9));
        assert!(set.remove(&7) && !set.remove(&7));
        assert_eq!(set.iter().copied().collect::<Vec<_>>(), [8]);
        set.extend([1, 2, 3]);
        assert!(set.spilled.is_none() && set.len() == 4);
        assert!(set.insert(4));
        assert!(set.spilled.is_some() && set.len() == 5);
        let mut all: Vec<_> = set.iter().copied().collect();
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3, 4, 8]);
        assert!(set.remove(&8) && set.contains(&4) && !set.contains(&8));
        set.clear();
        assert_eq!(set.len(), 0);
        assert!(set.insert(4) && set.spilled.is_none());
    }

    #[test]
    fn consecutive_identities_spread_and_stay_distinct() {
        let mut set = ActiveSet::default();
        for id in 0..10_000u64 {
            assert!(set.insert(id * 2 + 1));
        }
        assert!(set.contains(&9_999));
        assert!(!set.contains(&2));
        assert!(set.remove(&1));
        assert_eq!(set.len(), 9_999);
    }
}
