//! The entries of a journal by key, for lookups during an evaluation (docs/JOURNAL.md). The
//! built-in journals keep one for their whole life (appends update it), any other journal
//! gets one per evaluation from its `entries()`. A key recorded twice answers with its
//! latest entry.
//!
//! An Agent entry whose value is plain text (`{ text }`, no structured value, no Loop state
//! calls) keeps that text here, so a matching replay is answered without JS; every other
//! entry is found by `slot`, its index in the facade's list of entries.

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

/// A plain-text Agent answer the runtime recorded into a built-in memory journal: kept here
/// rather than as a JS object, so recording adds nothing for V8's young generation to copy
/// (docs/JOURNAL.md, "Cost"). `slot` is its place in the facade's list of entries.
#[derive(Debug, PartialEq, Eq)]
pub struct Recorded<'a> {
    pub key: &'a str,
    pub digest: &'a Raw,
    pub text: &'a str,
    pub slot: u32,
    /// The number of the Agent's span (`span-<n>`) when its `journal.step` point was left
    /// to whoever writes the journal (a run recorder's own journal, docs/STUDIO.md).
    pub span: Option<u64>,
}

/// Where one recorded answer's key and text are in [`JournalIndex`]'s text arena.
#[derive(Debug, Clone)]
struct RecordedAt {
    start: usize,
    key_end: usize,
    text_end: usize,
    digest: Raw,
    slot: u32,
    span: Option<u64>,
}

impl RecordedAt {
    fn view<'a>(&'a self, arena: &'a str) -> Recorded<'a> {
        Recorded {
            key: &arena[self.start..self.key_end],
            digest: &self.digest,
            text: &arena[self.key_end..self.text_end],
            slot: self.slot,
            span: self.span,
        }
    }
}

/// An entry by key: one filed from an entry object, or one of [`JournalIndex::recorded`].
#[derive(Debug)]
enum Stored {
    /// With its digest in raw form when it is the usual hex (compared without formatting
    /// the step's digest as text). Boxed: the table's slots stay small, so a replay's
    /// lookups touch fewer cache lines.
    Filed(Box<(Indexed, Option<Raw>)>),
    Recorded(usize),
}

#[derive(Debug, Default)]
pub struct JournalIndex {
    entries: foldhash::HashMap<String, Stored>,
    /// Natively recorded answers in slot order, filed into `entries` by
    /// [`JournalIndex::file_recorded`].
    recorded: Vec<RecordedAt>,
    /// Their keys and texts, back to back: one growing buffer rather than two small
    /// allocations per answer, which glibc's allocator made costly to free and coalesce
    /// when a journal of thousands of answers was dropped.
    arena: String,
    /// The next slot of the facade's list while this index numbers the slots itself (see
    /// [`JournalIndex::number_slots`]); None while the facade passes them in.
    next_slot: Option<u32>,
}

/// A copy of a [`JournalIndex`]'s natively recorded answers (two buffers copied whole), to
/// read on another thread: a recorded run's journal is formatted by its writer
/// (crates/aml-runs), not on the JS thread that owns the index.
#[derive(Debug, Clone, Default)]
pub struct RecordedCopy {
    recorded: Vec<RecordedAt>,
    arena: String,
}

impl RecordedCopy {
    /// The answer recorded at `slot`, as [`JournalIndex::recorded`] has it.
    pub fn recorded(&self, slot: u32) -> Option<Recorded<'_>> {
        let at = self.recorded.binary_search_by_key(&slot, |r| r.slot).ok()?;
        Some(self.recorded[at].view(&self.arena))
    }

    /// The recorded answers whose `journal.step` point is the writer's to make (see
    /// [`Recorded::span`]), in slot order.
    pub fn steps(&self) -> impl Iterator<Item = Recorded<'_>> {
        self.recorded
            .iter()
            .filter(|r| r.span.is_some())
            .map(|r| r.view(&self.arena))
    }
}

impl JournalIndex {
    /// A copy of the natively recorded answers (see [`RecordedCopy`]).
    pub fn recorded_copy(&self) -> RecordedCopy {
        RecordedCopy {
            recorded: self.recorded.clone(),
            arena: self.arena.clone(),
        }
    }

    pub fn insert(&mut self, key: String, entry: Indexed) {
        let raw = parse_hex(&entry.digest);
        self.entries
            .insert(key, Stored::Filed(Box::new((entry, raw))));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// From now on this index numbers the facade's slots, starting at `from`: a
    /// recording-only evaluation (docs/JOURNAL.md, "Cost") records its one-call Agents
    /// inside the engine, with no facade call to hand a slot over, so the facade takes its
    /// own slots here too ([`JournalIndex::take_slot`]) and settle order stays slot order.
    pub fn number_slots(&mut self, from: u32) {
        self.next_slot = Some(from);
    }

    /// The next slot, taken (None unless [`JournalIndex::number_slots`] ran).
    pub fn take_slot(&mut self) -> Option<u32> {
        let next = self.next_slot.as_mut()?;
        let slot = *next;
        *next += 1;
        Some(slot)
    }

    /// How many slots the list has while this index numbers them (None otherwise).
    pub fn slots(&self) -> Option<u32> {
        self.next_slot
    }

    /// Keeps a plain-text Agent answer recorded at `slot` (slots only grow). It is found by
    /// lookups once [`JournalIndex::file_recorded`] filed it, as an appended entry is.
    pub fn record_text(&mut self, slot: u32, key: &str, digest: Raw, text: &str) {
        self.record_step_text(slot, key, digest, text, None);
    }

    /// [`JournalIndex::record_text`] of an Agent whose `journal.step` point on span
    /// `span-<span>` is left to the journal's writer ([`RecordedCopy::steps`]).
    pub fn record_step_text(
        &mut self,
        slot: u32,
        key: &str,
        digest: Raw,
        text: &str,
        span: Option<u64>,
    ) {
        debug_assert!(self.recorded.last().is_none_or(|last| last.slot < slot));
        let start = self.arena.len();
        self.arena.push_str(key);
        let key_end = self.arena.len();
        self.arena.push_str(text);
        self.recorded.push(RecordedAt {
            start,
            key_end,
            text_end: self.arena.len(),
            digest,
            slot,
            span,
        });
    }

    fn view(&self, at: usize) -> Recorded<'_> {
        self.recorded[at].view(&self.arena)
    }

    /// The answer recorded at `slot` by [`JournalIndex::record_text`].
    pub fn recorded(&self, slot: u32) -> Option<Recorded<'_>> {
        let at = self.recorded.binary_search_by_key(&slot, |r| r.slot).ok()?;
        Some(self.view(at))
    }

    /// Files the answer recorded at `slot` under its key; false when there is none.
    pub fn file_recorded(&mut self, slot: u32) -> bool {
        let Ok(at) = self.recorded.binary_search_by_key(&slot, |r| r.slot) else {
            return false;
        };
        let key = self.view(at).key.to_string();
        self.entries.insert(key, Stored::Recorded(at));
        true
    }

    /// The entry of `kind` at `key` compared with the step's `digest`.
    pub fn find(&self, key: &str, kind: EntryKind, digest: &str) -> Found<'_> {
        match self.entries.get(key) {
            Some(Stored::Filed(filed)) if filed.0.kind == kind => {
                found(&filed.0, filed.0.digest == digest)
            }
            Some(Stored::Recorded(at)) if kind == EntryKind::Agent => {
                let recorded = self.view(*at);
                found_recorded(&recorded, hex(recorded.digest) == digest)
            }
            _ => Found::Nothing,
        }
    }

    /// [`JournalIndex::find`] with the step's digest in raw form.
    pub fn find_raw(&self, key: &str, kind: EntryKind, digest: &Raw) -> Found<'_> {
        match self.entries.get(key) {
            Some(Stored::Filed(filed)) if filed.0.kind == kind => {
                let (entry, raw) = &**filed;
                let same = match raw {
                    Some(raw) => raw == digest,
                    None => entry.digest == hex(digest),
                };
                found(entry, same)
            }
            Some(Stored::Recorded(at)) if kind == EntryKind::Agent => {
                let recorded = self.view(*at);
                found_recorded(&recorded, recorded.digest == digest)
            }
            _ => Found::Nothing,
        }
    }

    /// The slot of the entry of `kind` at `key`, whatever its digest.
    pub fn slot(&self, key: &str, kind: EntryKind) -> Option<u32> {
        match self.entries.get(key)? {
            Stored::Filed(filed) => (filed.0.kind == kind).then_some(filed.0.slot),
            Stored::Recorded(at) => (kind == EntryKind::Agent).then(|| self.recorded[*at].slot),
        }
    }
}

fn found(entry: &Indexed, same: bool) -> Found<'_> {
    if !same {
        Found::Diverged
    } else if let Some(text) = &entry.text {
        Found::Text(text, entry.slot)
    } else {
        Found::Slot(entry.slot)
    }
}

fn found_recorded<'a>(recorded: &Recorded<'a>, same: bool) -> Found<'a> {
    if same {
        Found::Text(recorded.text, recorded.slot)
    } else {
        Found::Diverged
    }
}

#[cfg(test)]
mod tests {
    use super::{EntryKind, Found, Indexed, JournalIndex, Recorded};

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
    fn numbered_slots_follow_from_where_they_start() {
        let mut index = JournalIndex::default();
        assert_eq!(index.take_slot(), None);
        assert_eq!(index.slots(), None);
        index.number_slots(3);
        assert_eq!(index.take_slot(), Some(3));
        assert_eq!(index.take_slot(), Some(4));
        assert_eq!(index.slots(), Some(5));
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

    #[test]
    fn a_copy_lists_the_steps_whose_points_its_writer_makes() {
        let mut index = JournalIndex::default();
        index.record_step_text(0, "agent:a", [1; 32], "first", Some(7));
        index.record_text(1, "agent:b", [2; 32], "second");
        index.record_step_text(2, "agent:c", [3; 32], "third", Some(9));
        let copy = index.recorded_copy();
        let steps: Vec<(Option<u64>, &str)> = copy.steps().map(|r| (r.span, r.key)).collect();
        assert_eq!(steps, [(Some(7), "agent:a"), (Some(9), "agent:c")]);
        assert_eq!(copy.recorded(2).map(|r| r.text), Some("third"));
    }

    #[test]
    fn recorded_answers_are_found_once_filed() {
        let mut index = JournalIndex::default();
        index.record_text(3, "agent:a", [1; 32], "first");
        index.record_text(5, "agent:b", [2; 32], "second");
        assert_eq!(
            index.recorded(5),
            Some(Recorded {
                key: "agent:b",
                digest: &[2; 32],
                text: "second",
                slot: 5,
                span: None,
            })
        );
        assert_eq!(index.recorded(4), None);
        // Recorded, not yet filed: a lookup in the same evaluation finds nothing.
        assert_eq!(
            index.find_raw("agent:a", EntryKind::Agent, &[1; 32]),
            Found::Nothing
        );
        assert!(index.file_recorded(3));
        assert!(!index.file_recorded(4));
        assert_eq!(
            index.find_raw("agent:a", EntryKind::Agent, &[1; 32]),
            Found::Text("first", 3)
        );
        assert_eq!(
            index.find("agent:a", EntryKind::Agent, &crate::digest::hex(&[1; 32])),
            Found::Text("first", 3)
        );
        assert_eq!(
            index.find_raw("agent:a", EntryKind::Agent, &[9; 32]),
            Found::Diverged
        );
        assert_eq!(
            index.find_raw("agent:a", EntryKind::Tool, &[1; 32]),
            Found::Nothing
        );
        assert_eq!(index.slot("agent:a", EntryKind::Agent), Some(3));
    }

    #[test]
    fn a_later_filing_for_a_key_wins_whichever_its_kind_of_entry() {
        let mut index = JournalIndex::default();
        index.record_text(0, "k", [1; 32], "recorded");
        assert!(index.file_recorded(0));
        index.insert(
            "k".into(),
            entry(EntryKind::Agent, "d", Some("appended"), 1),
        );
        assert_eq!(
            index.find("k", EntryKind::Agent, "d"),
            Found::Text("appended", 1)
        );
        index.record_text(2, "k", [2; 32], "again");
        assert!(index.file_recorded(2));
        assert_eq!(
            index.find_raw("k", EntryKind::Agent, &[2; 32]),
            Found::Text("again", 2)
        );
    }
}
