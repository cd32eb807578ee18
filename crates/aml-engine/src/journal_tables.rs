//! The journal's position tables (docs/JOURNAL.md): plain data the `Domain` holds once a
//! journaled evaluation enabled positions. The behaviour over them is position.rs, which
//! depends on the domain; the domain depends only on this data.

/// What a journaled Agent's lookup left for its recording (docs/JOURNAL.md): the key and
/// the raw request digest, kept here by task so the facade never needs them as JS strings
/// on the common path. The strings are reused from task to task.
#[derive(Debug, Default)]
pub struct JournalStep {
    pub key: String,
    pub digest: [u8; 32],
    /// Set by the lookup of an Agent that will run and be recorded; cleared when taken.
    pub live: bool,
    /// The number of the Agent's span (`span-<n>`) when its `journal.step` point is left to
    /// the writer of a run recorder's own journal (src/hot_path/recorded_steps.rs).
    pub span: Option<u64>,
}

/// The origins and creation ordinals of one journaled evaluation.
#[derive(Debug, Default)]
pub(crate) struct Positions {
    /// By task id: the task's origin prefix. Ids are reused: every creation overwrites it
    /// (in place, keeping the string's buffer).
    pub(crate) origins: Vec<String>,
    /// `<position><tag>` → how many tasks (`e`) or Tool calls (`t`) it created so far.
    pub(crate) ordinals: foldhash::HashMap<String, u32>,
    /// By task id: the pending journal step of its ready Agent.
    pub(crate) steps: Vec<JournalStep>,
    /// Scratch text for ordinal lookups (no allocation once it has grown).
    pub(crate) scratch: String,
    /// The binding's handle of the journal index a recording-only evaluation records its
    /// one-call Agents into (`Domain::record_steps_into`), opaque to the engine.
    pub(crate) recording: Option<u32>,
}

/// The position tables of a finished journaled evaluation, emptied, kept by the binding for
/// the next one: their per-task strings then keep their buffers, so a journaled Agent costs
/// no allocation for its origin or key once a first evaluation of that size ran.
#[derive(Debug)]
pub struct SparePositions(pub(crate) Box<Positions>);

/// The attributes of a journal point event (`journal.step`, `journal.replay`): the step's
/// `key` and its `kind` (`agent`, `tool`). One layout for the engine's points and the ones a
/// run recorder's writer makes for the engine (crates/aml-runs, `RunJournal::step_points`).
pub fn journal_point_attributes(key: &str, kind: &str) -> crate::trace::Attributes {
    vec![
        ("key".into(), crate::trace::AttrValue::Text(key.to_string())),
        (
            "kind".into(),
            crate::trace::AttrValue::Text(kind.to_string()),
        ),
    ]
}
