//! The entries of a journal by key, for lookups during an evaluation (docs/JOURNAL.md). The
//! built-in journals keep one for their whole life (appends update it), any other journal
//! gets one per evaluation from its `entries()`. A key recorded twice answers with its
//! latest entry.
//!
//! An Agent entry whose value is plain text (`{ text }`, no structured value, no Loop state
//! calls) keeps that text here, so a matching replay is answered without JS; every other
//! entry is found by `slot`, its index in the facade's list of entries.

use std::collections::HashMap;

use crate::digest::{hex, parse_hex, Raw};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Agent,
    Tool,
}

impl EntryKind {
    pub fn parse(kind: &str) -> Option<EntryKind> {
        match kind {
            "agent" => Some(EntryKind::Agent),
            "tool" => Some(EntryKind::Tool),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Agent => "agent",
            EntryKind::Tool => "tool",
        }
    }
}

#[derive(Debug)]
pub struct Indexed {
    pub kind: EntryKind,
    pub digest: String,
    /// The recorded text of a plain-text Agent entry.
    pub text: Option<String>,
    pub slot: u32,
}

/// What a lookup of one step found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found<'a> {
    /// No entry of this kind at the key: the step runs and is recorded.
    Nothing,
    /// An entry for another request: the step re-runs (a divergence).
    Diverged,
    /// The same request, answerable with this text without the facade (entry `slot`).
    Text(&'a str, u32),
    /// The same request; the facade replays entry `slot` (structured, Loop state calls).
    Slot(u32),
}

#[derive(Debug, Default)]
pub struct JournalIndex {
    /// Each entry with its digest in raw form when it is the usual hex (compared without
    /// formatting the step's digest as text).
    entries: HashMap<String, (Indexed, Option<Raw>)>,
}

impl JournalIndex {
    pub fn insert(&mut self, key: String, entry: Indexed) {
        let raw = parse_hex(&entry.digest);
        self.entries.insert(key, (entry, raw));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry of `kind` at `key` compared with the step's `digest`.
    pub fn find(&self, key: &str, kind: EntryKind, digest: &str) -> Found<'_> {
        self.find_by(key, kind, |entry, _| entry.digest == digest)
    }

    /// [`JournalIndex::find`] with the step's digest in raw form.
    pub fn find_raw(&self, key: &str, kind: EntryKind, digest: &Raw) -> Found<'_> {
        self.find_by(key, kind, |entry, raw| match raw {
            Some(raw) => raw == digest,
            None => entry.digest == hex(digest),
        })
    }

    fn find_by(
        &self,
        key: &str,
        kind: EntryKind,
        same: impl FnOnce(&Indexed, &Option<Raw>) -> bool,
    ) -> Found<'_> {
        match self.entries.get(key) {
            Some((entry, raw)) if entry.kind == kind => {
                if !same(entry, raw) {
                    Found::Diverged
                } else if let Some(text) = &entry.text {
                    Found::Text(text, entry.slot)
                } else {
                    Found::Slot(entry.slot)
                }
            }
            _ => Found::Nothing,
        }
    }

    /// The slot of the entry of `kind` at `key`, whatever its digest.
    pub fn slot(&self, key: &str, kind: EntryKind) -> Option<u32> {
        self.entries
            .get(key)
            .filter(|(entry, _)| entry.kind == kind)
            .map(|(entry, _)| entry.slot)
    }
}

#[cfg(test)]
mod tests {
    use super::{EntryKind, Found, Indexed, JournalIndex};

    fn entry(kind: EntryKind, digest: &str, text: Option<&str>, slot: u32) -> Indexed {
        Indexed {
            kind,
            digest: digest.into(),
            text: text.map(Into::into),
            slot,
        }
    }

    #[test]
    fn finds_text_slots_divergences_and_nothing() {
        let mut index = JournalIndex::default();
        index.insert(
            "agent:a".into(),
            entry(EntryKind::Agent, "d1", Some("hi"), 0),
        );
        index.insert("agent:b".into(), entry(EntryKind::Agent, "d2", None, 1));
        assert_eq!(
            index.find("agent:a", EntryKind::Agent, "d1"),
            Found::Text("hi", 0)
        );
        assert_eq!(
            index.find("agent:a", EntryKind::Agent, "other"),
            Found::Diverged
        );
        assert_eq!(
            index.find("agent:b", EntryKind::Agent, "d2"),
            Found::Slot(1)
        );
        assert_eq!(index.find("agent:a", EntryKind::Tool, "d1"), Found::Nothing);
        assert_eq!(
            index.find("agent:c", EntryKind::Agent, "d1"),
            Found::Nothing
        );
        assert_eq!(index.slot("agent:b", EntryKind::Agent), Some(1));
        assert_eq!(index.slot("agent:b", EntryKind::Tool), None);
    }

    #[test]
    fn raw_lookups_match_hex_and_other_digests() {
        let raw = [7u8; 32];
        let mut index = JournalIndex::default();
        index.insert(
            "a".into(),
            entry(EntryKind::Agent, &crate::digest::hex(&raw), Some("x"), 0),
        );
        index.insert("b".into(), entry(EntryKind::Agent, "not-hex", Some("y"), 1));
        assert_eq!(
            index.find_raw("a", EntryKind::Agent, &raw),
            Found::Text("x", 0)
        );
        assert_eq!(
            index.find_raw("a", EntryKind::Agent, &[8u8; 32]),
            Found::Diverged
        );
        assert_eq!(index.find_raw("b", EntryKind::Agent, &raw), Found::Diverged);
        assert_eq!(index.find_raw("a", EntryKind::Tool, &raw), Found::Nothing);
    }

    #[test]
    fn a_later_entry_for_a_key_wins() {
        let mut index = JournalIndex::default();
        index.insert("k".into(), entry(EntryKind::Agent, "old", Some("a"), 0));
        index.insert("k".into(), entry(EntryKind::Agent, "new", Some("b"), 1));
        assert_eq!(index.len(), 1);
        assert_eq!(
            index.find("k", EntryKind::Agent, "new"),
            Found::Text("b", 1)
        );
    }
}
