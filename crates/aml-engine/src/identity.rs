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

/// The identities active on one task's branch.
pub(crate) type ActiveSet = HashSet<Identity, BuildHasherDefault<IdentityHasher>>;

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
