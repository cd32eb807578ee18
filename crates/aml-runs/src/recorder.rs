//! The run recorder (docs/STUDIO.md "Cost"): the engine hands each trace record of a recorded
//! run to a [`RunTap`] as it is made (`aml_engine::TraceTap`), which encodes it at once into
//! the run's pending bytes (handover.rs) and drops it; one writer thread per [`Recorder`]
//! takes the bytes every [`FLUSH_AFTER`], makes their JSON (compact.rs) and appends it to the
//! run's events file, so a page watching a live run sees a record within a second.
//! [`Recorder::close`] has the writer take the rest, write the run's metadata and journal,
//! and report back, off the JS thread.
//!
//! Why bytes (measured with `npm run bench -- studio`): handing records over by a channel
//! send each woke the writer at a syscall per record (about 4 µs per Agent); handing them
//! over as objects for the writer to free made both threads contend for the allocator the
//! records came from (the native calls of a journaled Agent ran about four times slower
//! while the writer worked); writing their JSON on the JS thread cost it about 0.25 µs an
//! Agent. The hand-over form costs the JS thread fixed-size stores and one copy per text,
//! and the writer touches only bytes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aml_engine::{SpanId, SpanKind, TraceRecord, TraceTap};
use serde_json::{Map, Value};

use crate::handover::{decode, encode};
use crate::record::{append_events, create_run, write_meta, Appended};
use crate::RunsError;

/// How long a record may wait before the writer appends it.
pub const FLUSH_AFTER: Duration = Duration::from_millis(100);

enum Message {
    Open(u64, Box<RunState>),
    Finish(u64, Map<String, Value>),
    Journal(u64, Box<RunJournal>),
    Close(u64, Sender<Option<String>>),
}

/// A run's journal as the writer gets it: `count` entries in slot order, each either a record
/// line the facade wrote (`lines`, by slot, ascending) or a plain-text Agent answer recorded
/// natively (`native`), formatted by the writer. The JS thread hands over the native answers
/// as two copied buffers, and no string per entry.
pub struct RunJournal {
    pub workflow: String,
    pub count: u32,
    pub lines: Vec<(u32, String)>,
    pub native: aml_journal::RecordedCopy,
}

impl RunJournal {
    /// The `journal.step` points of the Agents whose points the engine left to this writer
    /// (src/hot_path/recorded_steps.rs), in the hand-over form, timed now.
    fn step_points(&self) -> Vec<u8> {
        let at = aml_engine::trace_clock_ms();
        let mut out = Vec::new();
        for step in self.native.steps() {
            let Some(span) = step.span else { continue };
            let point = TraceRecord::Point {
                span_id: SpanId::Span(span),
                parent: None,
                sequence: 0,
                timestamp: 0.0,
                at,
                name: "journal.step".into(),
                attributes: aml_engine::journal_point_attributes(step.key, "agent"),
                sensitive: vec![],
            };
            encode(&mut out, &point, false);
        }
        out
    }

    fn records(self) -> Result<Vec<String>, String> {
        let mut lines = self.lines.into_iter().peekable();
        let mut records = Vec::with_capacity(self.count as usize);
        for slot in 0..self.count {
            if let Some((_, line)) = lines.next_if(|(at, _)| *at == slot) {
                records.push(line);
                continue;
            }
            let recorded = self
                .native
                .recorded(slot)
                .ok_or_else(|| format!("journal entry {slot} is not recorded"))?;
            records.push(aml_journal::agent_text_record(
                recorded.key,
                recorded.digest,
                recorded.text,
            ));
        }
        Ok(records)
    }
}

/// What a run's tap and the writer share.
struct Shared {
    /// The records serialized and not yet taken by the writer, comma-separated; and the
    /// counts of Agents (spans named `Agent`: other agent-kind spans are its parts), Tools
    /// and Scripts. The lock is only ever held for one record or one swap.
    pending: Mutex<Pending>,
    /// Set by the writer when the run's events stop (the size cap, a failed write): the tap
    /// then only counts.
    stopped: AtomicBool,
    content: bool,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    counts: [u64; 3],
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A poisoned lock still holds whole records: each is appended by one call.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Records runs beneath one runs directory, with one writer thread.
pub struct Recorder {
    runs: PathBuf,
    max_bytes: u64,
    content: bool,
    sender: Sender<Message>,
    next: AtomicU64,
    spares: Arc<Spares>,
}

/// The byte buffers of closed runs, kept for the next runs. Measured (`perf`, 2,000-Agent
/// runs): a fresh run's pending bytes grew from empty by doubling, and the copies and the
/// page faults of memory new to the process were a fifth of what recording cost the JS
/// thread; a kept buffer already has the room.
#[derive(Default)]
struct Spares(Mutex<Vec<Vec<u8>>>);

/// At most this many buffers are kept, each of at most [`SPARE_BYTES`] capacity: what a
/// recorder holds between runs stays bounded whatever size its runs had.
const SPARES: usize = 4;
const SPARE_BYTES: usize = 16 << 20;

impl Spares {
    fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    fn keep(&self, mut bytes: Vec<u8>) {
        if bytes.capacity() == 0 || bytes.capacity() > SPARE_BYTES {
            return;
        }
        bytes.clear();
        let mut spares = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if spares.len() < SPARES {
            spares.push(bytes);
        }
    }
}

/// What the engine feeds: one recorded run's records.
pub struct RunTap {
    shared: Arc<Shared>,
}

impl TraceTap for RunTap {
    fn record(&mut self, record: TraceRecord) {
        let shared = &*self.shared;
        let mut pending = shared.pending();
        if let TraceRecord::SpanStart { kind, name, .. } = &record {
            match kind {
                SpanKind::Agent if name == "Agent" => pending.counts[0] += 1,
                SpanKind::Tool => pending.counts[1] += 1,
                SpanKind::Script => pending.counts[2] += 1,
                _ => {}
            }
        }
        if shared.stopped.load(Ordering::Relaxed) {
            return;
        }
        encode(&mut pending.bytes, &record, shared.content);
    }
}

impl Recorder {
    /// A recorder of runs beneath `runs`: events files capped at `max_bytes`, sensitive
    /// attributes kept only with `content`.
    pub fn new(runs: PathBuf, max_bytes: u64, content: bool) -> std::io::Result<Recorder> {
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("aml-run-recorder".into())
            .spawn(move || {
                yield_to_the_application();
                write_loop(&receiver);
            })?;
        Ok(Recorder {
            runs,
            max_bytes,
            content,
            sender,
            next: AtomicU64::new(1),
            spares: Arc::default(),
        })
    }

    /// Starts recording run `id` with `meta`: the writer creates its directory (a directory
    /// that cannot be made is reported at close, like any recording failure). Returns the
    /// run's key and the tap to attach; an id that is not a valid run id is refused here.
    pub fn start(&self, id: &str, meta: Map<String, Value>) -> Result<(u64, RunTap), RunsError> {
        crate::confine::run_dir(&self.runs, id)?;
        let run = self.next.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                bytes: self.spares.take(),
                counts: [0; 3],
            }),
            stopped: AtomicBool::new(false),
            content: self.content,
        });
        let state = RunState {
            shared: shared.clone(),
            taken: self.spares.take(),
            spares: self.spares.clone(),
            line: Vec::new(),
            runs: self.runs.clone(),
            id: id.to_string(),
            meta,
            max_bytes: self.max_bytes,
            truncated: false,
            problem: None,
        };
        // A writer that is gone (it panicked) reports so at close; the run goes on.
        let _ = self.sender.send(Message::Open(run, Box::new(state)));
        Ok((run, RunTap { shared }))
    }

    /// Merges `patch` (status, duration, error…) into run `run`'s metadata, written at close.
    pub fn finish(&self, run: u64, patch: Map<String, Value>) {
        let _ = self.sender.send(Message::Finish(run, patch));
    }

    /// Has the writer keep `journal` as run `run`'s journal (docs/JOURNAL.md's file format,
    /// the `journal` file beside its events), formatted and written off this thread; the
    /// run's metadata then says `journal: true`.
    pub fn journal(&self, run: u64, journal: RunJournal) {
        let _ = self.sender.send(Message::Journal(run, Box::new(journal)));
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

/// Lowers the writer thread's priority (nice 10): recording is diagnostics, and on a busy
/// machine the application's own threads come first. Measured on the 2-core machine: at the
/// default priority, waking the writer at a run's end put it on the JS thread's core
/// (the scheduler's wake affinity) and the JS thread lost milliseconds per run to it.
/// Best effort: where the call is refused, the writer runs at the default priority.
fn yield_to_the_application() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take no pointers; on Linux a thread id as `who` of
    // PRIO_PROCESS names only this thread.
    unsafe {
        let thread = libc::gettid();
        #[allow(clippy::cast_sign_loss)]
        let _ = libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, 10);
    }
}

fn write_loop(receiver: &Receiver<Message>) {
    let mut runs: HashMap<u64, RunState> = HashMap::new();
    loop {
        // Woken by a message, or every FLUSH_AFTER while some run is open.
        let message = if runs.is_empty() {
            receiver.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            receiver.recv_timeout(FLUSH_AFTER)
        };
        let message = match message {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                runs.values_mut().for_each(RunState::flush);
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match message {
            Message::Open(run, mut state) => {
                let meta = Value::Object(state.meta.clone()).to_string();
                if let Err(error) = create_run(&state.runs, &state.id, &meta) {
                    state.stop(error.to_string());
                }
                runs.insert(run, *state);
            }
            Message::Finish(run, patch) => {
                if let Some(state) = runs.get_mut(&run) {
                    state.meta.extend(patch);
                }
            }
            Message::Journal(run, journal) => {
                if let Some(state) = runs.get_mut(&run) {
                    state.write_journal(*journal);
                }
            }
            Message::Close(run, done) => {
                let problem = runs.remove(&run).and_then(|mut state| {
                    state.flush();
                    state.write_meta();
                    state.keep_buffers();
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
    shared: Arc<Shared>,
    /// The bytes taken from the tap, kept to swap back in empty (no allocation per take).
    taken: Vec<u8>,
    /// Where both buffers go when the run closes.
    spares: Arc<Spares>,
    /// The JSON line being made from `taken` (kept: no allocation per flush).
    line: Vec<u8>,
    runs: PathBuf,
    id: String,
    meta: Map<String, Value>,
    max_bytes: u64,
    truncated: bool,
    problem: Option<String>,
}

impl RunState {
    /// Stops the run's events for `problem` (the first one is what close reports).
    fn stop(&mut self, problem: String) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        self.problem.get_or_insert(problem);
    }

    /// Takes the pending records and appends them as one line: `[`, the records, `]`.
    fn flush(&mut self) {
        std::mem::swap(&mut self.shared.pending().bytes, &mut self.taken);
        if self.taken.is_empty() || self.truncated || self.problem.is_some() {
            self.taken.clear();
            return;
        }
        self.line.clear();
        self.line.push(b'[');
        // The tap encoded whole records (handover.rs); the JSON is the writer's to make.
        let whole = decode(&mut self.line, &self.taken, false);
        self.taken.clear();
        if !whole {
            self.stop("the run's records could not be read".to_string());
            return;
        }
        self.line.extend_from_slice(b"]\n");
        // compact.rs writes UTF-8 JSON.
        let line = std::str::from_utf8(&self.line).unwrap_or_default();
        match append_events(&self.runs, &self.id, line, self.max_bytes) {
            Ok(Appended::Written) => {}
            Ok(Appended::Capped) => {
                self.truncated = true;
                self.shared.stopped.store(true, Ordering::Relaxed);
                self.write_meta();
            }
            Err(error) => self.stop(error.to_string()),
        }
    }

    /// Hands both byte buffers to the next runs; the run is closed, so its tap only counts
    /// from now on.
    fn keep_buffers(&mut self) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        let pending = std::mem::take(&mut self.shared.pending().bytes);
        self.spares.keep(pending);
        self.spares.keep(std::mem::take(&mut self.taken));
    }

    fn write_journal(&mut self, journal: RunJournal) {
        if self.problem.is_some() {
            return;
        }
        // After the spans they belong to: a reader files a point under a span it has seen.
        let points = journal.step_points();
        if !points.is_empty() {
            self.flush();
            self.shared.pending().bytes.extend_from_slice(&points);
            self.flush();
        }
        let workflow = journal.workflow.clone();
        let written = journal.records().and_then(|records| {
            let dir = crate::confine::run_dir(&self.runs, &self.id).map_err(|e| e.to_string())?;
            aml_journal::write_records(
                &dir.join("journal"),
                &workflow,
                &records,
                aml_journal::Durability::Unsynced,
            )
            .map_err(|e| e.to_string())
        });
        match written {
            Ok(()) => {
                self.meta.insert("journal".into(), Value::Bool(true));
            }
            Err(problem) => self.stop(problem),
        }
    }

    fn write_meta(&mut self) {
        if self.problem.is_some() && !self.runs.join(&self.id).is_dir() {
            // Never made, or removed: nothing to describe, and nothing to recreate.
            return;
        }
        let [agent, tool, script] = self.shared.pending().counts;
        self.meta.insert(
            "counts".into(),
            serde_json::json!({ "agent": agent, "tool": tool, "script": script }),
        );
        if self.truncated {
            self.meta.insert("truncated".into(), Value::Bool(true));
        }
        let text = Value::Object(self.meta.clone()).to_string();
        if let Err(error) = write_meta(&self.runs, &self.id, &text) {
            self.stop(error.to_string());
        }
    }
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;
