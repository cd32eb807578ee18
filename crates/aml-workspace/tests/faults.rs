//! Process-level faults, with real processes: this test binary re-executes itself as the
//! helper (`fault_child_entry`, ignored in normal runs, selected with `--ignored --exact` and
//! driven by environment variables). No wall-clock assertions: kills land at random points,
//! and exclusion is checked by order (an exclusive marker file), not by timing.
mod support;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use aml_workspace::{
    AcquireRequest, DirLock, FilesystemStorage, Format, LoadRequest, LockFailure, LockPolicy,
    Materialization, PersistenceOptions, SaveRequest, StorageAdapter, WorkspaceIndex,
};

const CHILD: &str = "AML_WORKSPACE_FAULT_CHILD";
const FILES: usize = 60;

fn child(role: &str, env: &[(&str, String)]) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([
        "--ignored",
        "--exact",
        "fault_child_entry",
        "--nocapture",
        "--test-threads=1",
    ]);
    command
        .env(CHILD, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

async fn open(
    store: &Path,
    tmp: &Path,
    format: Format,
    lock: bool,
) -> aml_workspace::Result<Materialization> {
    let lease = FilesystemStorage::new(store.to_path_buf())
        .acquire(AcquireRequest {
            evaluation_id: "fault".into(),
            id: "k".into(),
            lock,
        })
        .await?;
    let mut options = PersistenceOptions::new(tmp.to_path_buf());
    options.format = format;
    Materialization::acquire(
        lease,
        options,
        Some(LoadRequest {
            revision: "current".into(),
            include: None,
            exclude: vec![],
        }),
    )
    .await
}

fn keep_all() -> SaveRequest {
    SaveRequest {
        include: None,
        exclude: vec![],
        gitignore: false,
        retention: 100,
    }
}

fn fill(dir: &Path, generation: &str) {
    for i in 0..FILES {
        let sub = dir.join(format!("d{}", i % 7));
        fs::create_dir_all(&sub).unwrap();
        fs::write(
            sub.join(format!("f{i}.txt")),
            format!("{generation}:{i}:{}", "x".repeat(i * 13)),
        )
        .unwrap();
    }
}

/// The generation every file of `dir` carries; panics on a torn or incomplete tree.
fn generation_of(dir: &Path) -> String {
    let mut generations = std::collections::BTreeSet::new();
    let mut count = 0;
    for sub in fs::read_dir(dir).unwrap() {
        for file in fs::read_dir(sub.unwrap().path()).unwrap() {
            let text = fs::read_to_string(file.unwrap().path()).unwrap();
            generations.insert(text.split(':').next().unwrap().to_string());
            count += 1;
        }
    }
    assert_eq!(count, FILES, "a restored revision is complete");
    assert_eq!(
        generations.len(),
        1,
        "a restored revision is never torn: {generations:?}"
    );
    generations.into_iter().next().unwrap()
}

#[test]
#[ignore = "helper process for the fault tests, run by them"]
fn fault_child_entry() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (store, tmp) = (
        PathBuf::from(var("AML_STORE")),
        PathBuf::from(var("AML_TMP")),
    );
    let format = Format::parse(&var("AML_FORMAT")).unwrap_or(Format::Archive);
    match var(CHILD).as_str() {
        "save" => runtime.block_on(async {
            let mut ws = open(&store, &tmp, format, false).await.unwrap();
            fill(ws.directory(), &var("AML_GENERATION"));
            println!("\n@@ready");
            ws.save(keep_all()).await.unwrap();
            println!("\n@@saved");
        }),
        "race" => runtime.block_on(async {
            let mut ws = open(&store, &tmp, format, false).await.unwrap();
            fs::write(
                ws.directory().join(format!("writer-{}", var("AML_WRITER"))),
                "w",
            )
            .unwrap();
            println!("\n@@ready");
            while !Path::new(&var("AML_GO")).exists() {
                std::thread::sleep(Duration::from_millis(1));
            }
            match ws.save(keep_all()).await {
                Ok(revision) => println!("\n@@won {}", revision.id),
                Err(error) => println!("\n@@lost {}", error.message),
            }
            ws.release().await.unwrap();
        }),
        "lock" => {
            let target = PathBuf::from(var("AML_TARGET"));
            let marker = target.join("holder");
            let policy = LockPolicy::workspace();
            let mut held = 0;
            while held < 5 {
                match DirLock::acquire(&target, &policy) {
                    Ok(lock) => {
                        // Exclusive create: fails if anyone else believes they hold the lock.
                        if fs::OpenOptions::new()
                            .write(true)
                            .create_new(true)
                            .open(&marker)
                            .is_err()
                        {
                            println!("\n@@violation");
                        }
                        std::thread::sleep(Duration::from_millis(2));
                        fs::remove_file(&marker).unwrap();
                        lock.release().unwrap();
                        held += 1;
                    }
                    Err(LockFailure::Held) => std::thread::sleep(Duration::from_millis(1)),
                    // The parent test is gone with its directory: stop, never spin.
                    Err(LockFailure::Io(error, _))
                        if error.kind() == std::io::ErrorKind::NotFound && target.exists() => {}
                    Err(LockFailure::Io(error, path)) => panic!("{error} at {}", path.display()),
                }
            }
            println!("\n@@done {held}");
        }
        _ => {}
    }
}

/// A helper process and its protocol lines (`@@…`; the test harness prints around them).
struct Helper {
    child: Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Helper {
    fn spawn(mut command: Command) -> Helper {
        let mut child = command.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Helper { child, lines }
    }
    fn id(&self) -> u32 {
        self.child.id()
    }
    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait()
    }
}

impl Drop for Helper {
    /// A test that fails half-way leaves no helper behind (killing a reaped child is a no-op).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_line(helper: &mut Helper) -> Option<String> {
    for line in helper.lines.by_ref() {
        let line = line.ok()?;
        if let Some(at) = line.find("@@") {
            return Some(line[at + 2..].trim().to_string());
        }
    }
    None
}

struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// `rounds` saves by child processes, each SIGKILLed at a random point of its save; after
/// each, a fresh reader checks the published tree is whole. Returns the fixture.
fn sigkill_saves(format: Format, rounds: usize) -> support::Fixture {
    let fx = support::Fixture::new();
    let env = |generation: &str| {
        vec![
            ("AML_STORE", fx.store().to_string_lossy().into_owned()),
            ("AML_TMP", fx.tmp().to_string_lossy().into_owned()),
            ("AML_FORMAT", format.as_str().to_string()),
            ("AML_GENERATION", generation.to_string()),
        ]
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The first save runs to completion and calibrates how long a save takes here.
    let mut first = Helper::spawn(child("save", &env("g0")));
    assert_eq!(read_line(&mut first).as_deref(), Some("ready"));
    let started = Instant::now();
    assert_eq!(read_line(&mut first).as_deref(), Some("saved"));
    let save_micros = started.elapsed().as_micros() as u64;
    first.wait().unwrap();
    let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ u64::from(std::process::id()));
    let mut previous = "g0".to_string();
    let (mut published, mut killed) = (0, 0);
    for round in 1..=rounds {
        let generation = format!("g{round}");
        let mut saver = Helper::spawn(child("save", &env(&generation)));
        assert_eq!(read_line(&mut saver).as_deref(), Some("ready"));
        std::thread::sleep(Duration::from_micros(
            random.below(save_micros + save_micros / 4),
        ));
        // SAFETY: kill(2) on our own child's pid; the child has not been reaped yet.
        unsafe { libc::kill(saver.id() as i32, libc::SIGKILL) };
        let status = saver.wait().unwrap();
        if status.success() {
            published += 1;
        } else {
            killed += 1;
        }
        // A fresh reader: the index parses and the tree is the previous or the new one, whole.
        let index = fs::read(fx.segment("k").join("workspace.json")).unwrap();
        WorkspaceIndex::parse(&index).expect("the index always parses");
        let seen = runtime.block_on(async {
            let mut reader = open(&fx.store(), &fx.tmp(), format, false)
                .await
                .expect("a fresh reader restores");
            let seen = generation_of(reader.directory());
            reader.release().await.unwrap();
            seen
        });
        assert!(
            seen == previous || seen == generation,
            "round {round}: saw {seen}, expected {previous} or {generation}"
        );
        previous = seen;
    }
    assert!(
        killed > 0,
        "some saves were interrupted ({published} completed)"
    );
    fx
}

#[test]
fn sigkill_during_archive_saves_never_tears_a_revision() {
    sigkill_saves(Format::Archive, 100);
}

#[test]
fn sigkill_during_folder_saves_never_tears_a_revision() {
    sigkill_saves(Format::Folder, 100);
}

/// After saves killed mid-way, one more save leaves only indexed revisions in the store and
/// no materialization in the temporary directory (issue 22 item 5).
fn killed_saves_are_swept(format: Format) {
    let fx = sigkill_saves(format, 40);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut ws = open(&fx.store(), &fx.tmp(), format, false).await.unwrap();
        fill(ws.directory(), "last");
        ws.save(keep_all()).await.unwrap();
        ws.release().await.unwrap();
    });
    let left = support::garbage::garbage(&fx.segment("k"), &fx.tmp());
    let trees: Vec<_> = left
        .unindexed
        .iter()
        .map(|id| fx.segment("k").join("revisions").join(id))
        .filter(|dir| dir.is_dir())
        .map(|dir| support::tree(&dir))
        .collect();
    assert!(left.is_empty(), "{format:?}: {left:?} {trees:?}");
}

#[test]
fn killed_archive_saves_are_swept_by_one_more_save() {
    killed_saves_are_swept(Format::Archive);
}

#[test]
fn killed_folder_saves_are_swept_by_one_more_save() {
    killed_saves_are_swept(Format::Folder);
}

#[test]
fn eight_unlocked_writers_one_publication_no_lost_update() {
    for format in [Format::Archive, Format::Folder] {
        let fx = support::Fixture::new();
        let go = fx.dir.path().join("go");
        let mut writers = Vec::new();
        for writer in 0..8 {
            let env = vec![
                ("AML_STORE", fx.store().to_string_lossy().into_owned()),
                ("AML_TMP", fx.tmp().to_string_lossy().into_owned()),
                ("AML_FORMAT", format.as_str().to_string()),
                ("AML_WRITER", writer.to_string()),
                ("AML_GO", go.to_string_lossy().into_owned()),
            ];
            writers.push(Helper::spawn(child("race", &env)));
        }
        for writer in &mut writers {
            assert_eq!(read_line(writer).as_deref(), Some("ready"));
        }
        fs::write(&go, "").unwrap();
        let mut won = Vec::new();
        for writer in &mut writers {
            let line = read_line(writer).unwrap();
            assert!(writer.wait().unwrap().success());
            match line.split_once(' ') {
                Some(("won", id)) => won.push(id.to_string()),
                Some(("lost", message)) => {
                    assert_eq!(message, "Filesystem Workspace conditional write failed")
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        // All eight loaded the same (absent) index, so exactly one publication can succeed.
        assert_eq!(won.len(), 1, "{format:?}");
        let index =
            WorkspaceIndex::parse(&fs::read(fx.segment("k").join("workspace.json")).unwrap())
                .unwrap();
        assert_eq!(index.current, won[0]);
        assert_eq!(index.revisions.len(), 1);
        // The losers removed their uploads.
        let left: Vec<_> = fs::read_dir(fx.segment("k").join("revisions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with(".aml-tmp-"))
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}

#[test]
fn sixteen_processes_never_hold_one_lock_together() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("workspace");
    fs::create_dir(&target).unwrap();
    // The parent first holds the lock the way the TypeScript SDK does: a bare directory.
    fs::create_dir(dir.path().join("workspace.lock")).unwrap();
    fs::write(target.join("holder"), "parent").unwrap();
    let env = vec![("AML_TARGET", target.to_string_lossy().into_owned())];
    let mut children: Vec<Helper> = (0..16)
        .map(|_| Helper::spawn(child("lock", &env)))
        .collect();
    // While it is held, nobody gets in (they would find the marker and report it).
    std::thread::sleep(Duration::from_millis(300));
    fs::remove_file(target.join("holder")).unwrap();
    fs::remove_dir(dir.path().join("workspace.lock")).unwrap();
    let mut total = 0;
    for child in &mut children {
        let mut lines = Vec::new();
        while let Some(line) = read_line(child) {
            lines.push(line);
        }
        assert!(child.wait().unwrap().success());
        assert!(
            !lines.iter().any(|l| l == "violation"),
            "two holders at once: {lines:?}"
        );
        assert_eq!(lines.last().map(String::as_str), Some("done 5"));
        total += 5;
    }
    assert_eq!(total, 80);
    assert!(!dir.path().join("workspace.lock").exists());
}
