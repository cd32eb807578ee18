//! The run recorder (docs/STUDIO.md "Cost"): the engine hands each trace record of a recorded
//! run to a [`RunTap`] as it is made (`aml_engine::TraceTap`), which puts it in the run's
//! pending list; one writer thread per [`Recorder`] takes the list every [`TAKE_EVERY`] and
//! serializes the records, and appends them to the run's events file every [`FLUSH_AFTER`].
//! The JS thread pays for an uncontended lock and a push per record and never wakes the
//! writer (a channel send per record did, at a syscall each: measured 4 µs per Agent);
//! serializing and writing happen on another core while the run goes on (taking the list
//! often keeps it short, and leaves little for the close to wait for), and a record is on disk
//! within [`FLUSH_AFTER`] plus one write, so a page watching a live run sees it within a second. [`Recorder::close`] has the writer take the
//! rest at once and waits for it, so a finished evaluation's record is complete when
//! `evaluate()` settles.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use aml_engine::{SpanKind, TraceRecord, TraceTap};
use serde_json::{Map, Value};

use crate::compact::Compact;
use crate::record::{append_events, create_run, write_meta, Appended};
use crate::RunsError;

/// How long a record may wait before the writer appends it.
pub const FLUSH_AFTER: Duration = Duration::from_millis(100);
/// How often the writer takes and serializes the records of open runs.
const TAKE_EVERY: Duration = Duration::from_millis(5);
/// A run's serialized line is appended at once past this size.
const FLUSH_BYTES: usize = 1 << 20;

enum Message {
    Open(u64, Box<RunState>),
    Finish(u64, Map<String, Value>),
    Journal(u64, String, Vec<JournalLine>),
    Close(u64, Sender<Option<String>>),
}

/// One record of a run's journal, as the writer gets it.
pub enum JournalLine {
    /// A plain-text Agent answer recorded natively, formatted by the writer.
    Text {
        key: String,
        digest: aml_journal::Raw,
        text: String,
    },
    /// A record line as the facade wrote it.
    Line(String),
}

impl JournalLine {
    fn into_record(self) -> String {
        match self {
            JournalLine::Text { key, digest, text } => {
                aml_journal::agent_text_record(&key, &digest, &text)
            }
            JournalLine::Line(line) => line,
        }
    }
}

/// A run's records made and not yet taken by the writer.
type Pending = Arc<Mutex<Vec<TraceRecord>>>;

/// Records runs beneath one runs directory, with one writer thread.
pub struct Recorder {
    runs: PathBuf,
    max_bytes: u64,
    content: bool,
    sender: Sender<Message>,
    next: AtomicU64,
}

/// What the engine feeds: one recorded run's pending records.
pub struct RunTap {
    pending: Pending,
}

impl TraceTap for RunTap {
    fn record(&mut self, record: TraceRecord) {
        // The lock is only ever held for a push or a swap: a poisoned one holds a valid list.
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
    }
}

impl Recorder {
    /// A recorder of runs beneath `runs`: events files capped at `max_bytes`, sensitive
    /// attributes kept only with `content`.
    pub fn new(runs: PathBuf, max_bytes: u64, content: bool) -> std::io::Result<Recorder> {
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("aml-run-recorder".into())
            .spawn(move || write_loop(&receiver))?;
        Ok(Recorder {
            runs,
            max_bytes,
            content,
            sender,
            next: AtomicU64::new(1),
        })
    }

    /// Creates run `id`'s directory with `meta` (on the caller's thread, so a directory that
    /// cannot be made is reported at once) and returns its key and the tap to attach.
    pub fn start(&self, id: &str, meta: Map<String, Value>) -> Result<(u64, RunTap), RunsError> {
        create_run(&self.runs, id, &Value::Object(meta.clone()).to_string())?;
        let run = self.next.fetch_add(1, Ordering::Relaxed);
        let pending = Pending::default();
        let state = RunState {
            pending: pending.clone(),
            taken: Vec::new(),
            runs: self.runs.clone(),
            id: id.to_string(),
            meta,
            counts: [0; 3],
            line: Vec::new(),
            appended: Instant::now(),
            max_bytes: self.max_bytes,
            content: self.content,
            truncated: false,
            problem: None,
        };
        // A writer that is gone (it panicked) reports so at close; the run goes on.
        let _ = self.sender.send(Message::Open(run, Box::new(state)));
        Ok((run, RunTap { pending }))
    }

    /// Merges `patch` (status, duration, error…) into run `run`'s metadata, written at close.
    pub fn finish(&self, run: u64, patch: Map<String, Value>) {
        let _ = self.sender.send(Message::Finish(run, patch));
    }

    /// Has the writer keep `lines` as run `run`'s journal of `workflow` (docs/JOURNAL.md's
    /// file format, the `journal` file beside its events), formatted and written off this
    /// thread; the run's metadata then says `journal: true`.
    pub fn journal(&self, run: u64, workflow: String, lines: Vec<JournalLine>) {
        let _ = self.sender.send(Message::Journal(run, workflow, lines));
    }

    /// Writes what run `run` has pending and its final metadata, and waits for it; returns
    /// why recording stopped early, if it did. Records that arrive later are dropped.
    pub fn close(&self, run: u64) -> Option<String> {
        let (done, finished) = mpsc::channel();
        if self.sender.send(Message::Close(run, done)).is_err() {
            return Some("the recorder's writer stopped".to_string());
        }
        finished
            .recv()
            .unwrap_or_else(|_| Some("the recorder's writer stopped".to_string()))
    }
}

fn write_loop(receiver: &Receiver<Message>) {
    let mut runs: HashMap<u64, RunState> = HashMap::new();
    loop {
        // Woken by a message, or every TAKE_EVERY while some run is open.
        let message = if runs.is_empty() {
            receiver.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            receiver.recv_timeout(TAKE_EVERY)
        };
        let message = match message {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                for state in runs.values_mut() {
                    state.take();
                    if state.appended.elapsed() >= FLUSH_AFTER || state.line.len() >= FLUSH_BYTES {
                        state.flush();
                    }
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match message {
            Message::Open(run, state) => {
                runs.insert(run, *state);
            }
            Message::Finish(run, patch) => {
                if let Some(state) = runs.get_mut(&run) {
                    state.meta.extend(patch);
                }
            }
            Message::Journal(run, workflow, lines) => {
                if let Some(state) = runs.get_mut(&run) {
                    state.write_journal(&workflow, lines);
                }
            }
            Message::Close(run, done) => {
                let problem = runs.remove(&run).and_then(|mut state| {
                    state.flush();
                    state.write_meta();
                    state.problem
                });
                let _ = done.send(problem);
            }
        }
    }
    for state in runs.values_mut() {
        state.flush();
        state.write_meta();
    }
}

/// The writer's state of one run.
struct RunState {
    pending: Pending,
    /// The records taken from `pending`, kept to swap back in empty (no allocation per take).
    taken: Vec<TraceRecord>,
    runs: PathBuf,
    id: String,
    meta: Map<String, Value>,
    /// Agents (spans named `Agent`: other agent-kind spans are its parts), Tools, Scripts.
    counts: [u64; 3],
    /// The line being serialized: `[`, the records, `]` and a newline.
    line: Vec<u8>,
    /// When the line was last appended (or the run opened).
    appended: Instant,
    max_bytes: u64,
    content: bool,
    truncated: bool,
    problem: Option<String>,
}

impl RunState {
    fn add(&mut self, record: &TraceRecord) {
        if let TraceRecord::SpanStart { kind, name, .. } = record {
            match kind {
                SpanKind::Agent if name == "Agent" => self.counts[0] += 1,
                SpanKind::Tool => self.counts[1] += 1,
                SpanKind::Script => self.counts[2] += 1,
                _ => {}
            }
        }
        if self.truncated || self.problem.is_some() {
            return;
        }
        self.line
            .push(if self.line.is_empty() { b'[' } else { b',' });
        let compact = Compact {
            record,
            content: self.content,
        };
        // Writing JSON into a Vec cannot fail: every value here serializes.
        let _ = serde_json::to_writer(&mut self.line, &compact);
    }

    /// Takes the pending records and serializes them into the line.
    fn take(&mut self) {
        std::mem::swap(
            &mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner),
            &mut self.taken,
        );
        let mut taken = std::mem::take(&mut self.taken);
        for record in taken.drain(..) {
            self.add(&record);
        }
        self.taken = taken;
    }

    /// Takes the pending records and appends the line.
    fn flush(&mut self) {
        self.take();
        self.appended = Instant::now();
        if self.line.is_empty() {
            return;
        }
        self.line.extend_from_slice(b"]\n");
        let line = String::from_utf8(std::mem::take(&mut self.line)).unwrap_or_default();
        match append_events(&self.runs, &self.id, &line, self.max_bytes) {
            Ok(Appended::Written) => {}
            Ok(Appended::Capped) => {
                self.truncated = true;
                self.write_meta();
            }
            Err(error) => self.problem = Some(error.to_string()),
        }
    }

    fn write_journal(&mut self, workflow: &str, lines: Vec<JournalLine>) {
        let records: Vec<String> = lines.into_iter().map(JournalLine::into_record).collect();
        let written = crate::confine::run_dir(&self.runs, &self.id)
            .map_err(|e| e.to_string())
            .and_then(|dir| {
                aml_journal::write_all(
                    &dir.join("journal"),
                    workflow,
                    &records,
                    aml_journal::Durability::Unsynced,
                )
                .map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => {
                self.meta.insert("journal".into(), Value::Bool(true));
            }
            Err(problem) => {
                self.problem.get_or_insert(problem);
            }
        }
    }

    fn write_meta(&mut self) {
        let [agent, tool, script] = self.counts;
        self.meta.insert(
            "counts".into(),
            serde_json::json!({ "agent": agent, "tool": tool, "script": script }),
        );
        if self.truncated {
            self.meta.insert("truncated".into(), Value::Bool(true));
        }
        let text = Value::Object(self.meta.clone()).to_string();
        if let Err(error) = write_meta(&self.runs, &self.id, &text) {
            self.problem.get_or_insert(error.to_string());
        }
    }
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;
