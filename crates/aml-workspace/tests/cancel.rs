//! Interrupted restores and saves: an abort observed after the first files stops the work,
//! leaves no temporary root, lock, staged file or unpublished revision behind, and the
//! previous revision stays current. Counts of observed files, never wall time.
mod support;

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use aml_workspace::{
    AcquireRequest, Cancel, ErrorClass, Format, Materialization, StorageAdapter, WorkspaceError,
};
use support::*;
use tokio_util::sync::CancellationToken;

const FILES: usize = 60;
const ABORT_AFTER: usize = 5;

/// A cancellation that fires once the engine is about to move file number `after`, and the
/// count of files it was about to move.
fn abort_after(after: usize) -> (Cancel, Arc<AtomicUsize>) {
    let token = CancellationToken::new();
    let seen = Arc::new(AtomicUsize::new(0));
    let (fire, count) = (token.clone(), seen.clone());
    let cancel = Cancel::from_token(token).with_observer(move |_| {
        if count.fetch_add(1, Ordering::SeqCst) + 1 == after {
            fire.cancel();
        }
    });
    (cancel, seen)
}

fn fill(root: &Path) {
    for i in 0..FILES {
        write(
            root,
            &format!("src/m{}/f{i}.txt", i % 4),
            &format!("file {i}"),
        );
    }
}

fn assert_aborted(error: &WorkspaceError, what: &str) {
    assert_eq!(error.class, ErrorClass::Error);
    assert_eq!(error.message, format!("Workspace {what} was aborted"));
    assert_eq!(error.code.as_deref(), Some("ABORT_ERR"));
}

/// Every file below `dir`, relative.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                let rel = entry
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.push(rel);
            }
        }
    }
    found.sort();
    found
}

async fn seeded(fx: &Fixture, format: Format) -> Vec<String> {
    let mut ws = fx.open("cancel", format, None, true).await.unwrap();
    fill(ws.directory());
    ws.save(save_all()).await.unwrap();
    ws.release().await.unwrap();
    files_below(&fx.segment("cancel"))
}

async fn restore_is_interrupted(format: Format) {
    let fx = Fixture::new();
    let stored = seeded(&fx, format).await;
    let (cancel, seen) = abort_after(ABORT_AFTER);
    let lease = fx
        .storage()
        .acquire(AcquireRequest {
            evaluation_id: "e".into(),
            id: "cancel".into(),
            lock: true,
        })
        .await
        .unwrap();
    let error = Materialization::acquire_cancellable(lease, fx.options(format), current(), &cancel)
        .await
        .err()
        .expect("the restore is aborted");
    assert_aborted(&error, "restore");
    // The archive is extracted serially; the folder store copies on two threads, and the
    // other one sees the abort at its next file.
    let seen = seen.load(Ordering::SeqCst);
    assert!(
        (ABORT_AFTER..=ABORT_AFTER + 1).contains(&seen),
        "{seen} files were started"
    );
    assert_eq!(
        fs::read_dir(fx.tmp()).unwrap().count(),
        0,
        "no temporary root is left"
    );
    assert!(!fx
        .store()
        .join(format!(
            "{}.lock",
            aml_workspace::paths::storage_segment("cancel")
        ))
        .exists());
    assert_eq!(
        files_below(&fx.segment("cancel")),
        stored,
        "the store is untouched"
    );
    // The lock is free and the revision whole.
    let ws = fx.open("cancel", format, current(), true).await.unwrap();
    assert_eq!(files_below(ws.directory()).len(), FILES);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_restore_stops_after_the_files_it_had_started() {
    restore_is_interrupted(Format::Archive).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_restore_stops_after_the_files_it_had_started() {
    restore_is_interrupted(Format::Folder).await;
}

async fn save_is_interrupted(format: Format) {
    let fx = Fixture::new();
    let stored = seeded(&fx, format).await;
    let index = fs::read(fx.segment("cancel").join("workspace.json")).unwrap();
    let mut ws = fx.open("cancel", format, current(), true).await.unwrap();
    write(ws.directory(), "src/new.txt", "new");
    let (cancel, seen) = abort_after(ABORT_AFTER);
    let error = ws.save_cancellable(save_all(), &cancel).await.unwrap_err();
    assert_aborted(&error, "save");
    let seen = seen.load(Ordering::SeqCst);
    assert!(
        (ABORT_AFTER..=ABORT_AFTER + 1).contains(&seen),
        "{seen} files were started"
    );
    assert_eq!(
        fs::read(fx.segment("cancel").join("workspace.json")).unwrap(),
        index
    );
    assert_eq!(
        files_below(&fx.segment("cancel")),
        stored,
        "nothing unpublished is left"
    );
    let root = ws.directory().parent().unwrap().to_path_buf();
    assert_eq!(
        fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            // The root's owner record (for the sweep of dead processes' roots) stays.
            .filter(|name| name != "owner.json")
            .collect::<Vec<_>>(),
        vec![std::ffi::OsString::from("workspace")],
        "no staged archive is left"
    );
    // The lease is still usable: the next save publishes on top of the previous revision.
    let revision = ws.save(save_all()).await.unwrap();
    assert_eq!(
        ws.index().unwrap().current_revision().unwrap().id,
        revision.id
    );
    ws.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_save_stops_and_publishes_nothing() {
    save_is_interrupted(Format::Archive).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_save_stops_and_removes_what_it_uploaded() {
    save_is_interrupted(Format::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_before_the_call_touches_nothing() {
    let fx = Fixture::new();
    seeded(&fx, Format::Archive).await;
    let cancel = Cancel::new();
    cancel.cancel();
    let mut ws = fx
        .open("cancel", Format::Archive, current(), true)
        .await
        .unwrap();
    let error = ws.save_cancellable(save_all(), &cancel).await.unwrap_err();
    assert_aborted(&error, "save");
    ws.release().await.unwrap();
    let lease = fx
        .storage()
        .acquire(AcquireRequest {
            evaluation_id: "e".into(),
            id: "cancel".into(),
            lock: true,
        })
        .await
        .unwrap();
    let error = Materialization::acquire_cancellable(
        lease,
        fx.options(Format::Archive),
        current(),
        &cancel,
    )
    .await
    .err()
    .unwrap();
    assert_aborted(&error, "restore");
    assert_eq!(fs::read_dir(fx.tmp()).unwrap().count(), 0);
    fx.open("cancel", Format::Archive, current(), true)
        .await
        .unwrap();
}
