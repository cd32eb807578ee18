//! Conditional publication, retention and orphan cleanup through the filesystem store.
mod support;

use std::fs;

use aml_workspace::{Format, SaveRequest};
use support::*;

fn revisions(fx: &Fixture, id: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(fx.segment(id).join("revisions"))
        .map(|dir| {
            dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

async fn stale_writer_loses(format: Format) {
    let fx = Fixture::new();
    let mut a = fx.open("w", format, current(), false).await.unwrap();
    let mut b = fx.open("w", format, current(), false).await.unwrap();
    write(a.directory(), "who", "a");
    write(b.directory(), "who", "b");
    let won = a.save(save_all()).await.unwrap();
    let error = b.save(save_all()).await.unwrap_err();
    assert_eq!(
        error.message,
        "Filesystem Workspace conditional write failed"
    );
    let index = fs::read_to_string(fx.segment("w").join("workspace.json")).unwrap();
    assert!(index.contains(&won.id));
    let expected = match format {
        Format::Archive => vec![format!("{}.tar.gz", won.id)],
        Format::Folder => vec![won.id.clone()],
    };
    assert_eq!(
        revisions(&fx, "w"),
        expected,
        "the loser's upload was removed"
    );
    // The winner can publish again on top of its own revision.
    write(a.directory(), "who", "a2");
    a.save(save_all()).await.unwrap();
    a.release().await.unwrap();
    b.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_archive_writer_loses() {
    stale_writer_loses(Format::Archive).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_folder_writer_loses() {
    stale_writer_loses(Format::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_prunes_after_publication_across_formats() {
    let fx = Fixture::new();
    let keep = |n| SaveRequest {
        retention: n,
        ..save_all()
    };
    let mut ids = Vec::new();
    for (i, format) in [Format::Archive, Format::Folder, Format::Archive]
        .into_iter()
        .enumerate()
    {
        let mut ws = fx.open("r", format, current(), true).await.unwrap();
        write(ws.directory(), &format!("f{i}"), "x");
        ids.push(ws.save(keep(2)).await.unwrap());
        ws.release().await.unwrap();
    }
    let index = aml_workspace::WorkspaceIndex::parse(
        &fs::read(fx.segment("r").join("workspace.json")).unwrap(),
    )
    .unwrap();
    let listed: Vec<&str> = index.revisions.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(listed, [ids[2].id.as_str(), ids[1].id.as_str()]);
    assert_eq!(revisions(&fx, "r"), {
        let mut v = vec![format!("{}.tar.gz", ids[2].id), ids[1].id.clone()];
        v.sort();
        v
    });
    // A folder-format provider restores the archive current revision (format per revision).
    let mut ws = fx.open("r", Format::Folder, current(), true).await.unwrap();
    let names: Vec<String> = tree(ws.directory()).into_iter().map(|e| e.0).collect();
    assert_eq!(names, ["f0", "f1", "f2"]);
    ws.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locked_identity_conflicts_until_released() {
    let fx = Fixture::new();
    let mut a = fx
        .open("busy", Format::Archive, current(), true)
        .await
        .unwrap();
    let error = fx
        .open("busy", Format::Archive, current(), true)
        .await
        .err()
        .unwrap();
    assert!(error.is_conflict());
    assert_eq!(
        error.message,
        "Workspace \"busy\" already has an active writer"
    );
    assert_eq!(
        fs::read_dir(fx.tmp()).unwrap().count(),
        1,
        "the refused acquisition made no materialization"
    );
    // Unlocked access still works.
    let mut u = fx
        .open("busy", Format::Archive, current(), false)
        .await
        .unwrap();
    u.release().await.unwrap();
    a.release().await.unwrap();
    let mut b = fx
        .open("busy", Format::Archive, current(), true)
        .await
        .unwrap();
    b.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_a_folder_revision_removes_its_directories() {
    let fx = Fixture::new();
    let mut ws = fx.open("p", Format::Folder, current(), true).await.unwrap();
    write(ws.directory(), "a/b/c.txt", "deep");
    write(ws.directory(), "a/d.txt", "shallow");
    let first = ws
        .save(SaveRequest {
            retention: 1,
            ..save_all()
        })
        .await
        .unwrap();
    let second = ws
        .save(SaveRequest {
            retention: 1,
            ..save_all()
        })
        .await
        .unwrap();
    ws.release().await.unwrap();
    assert!(!fx.segment("p").join("revisions").join(&first.id).exists());
    assert_eq!(revisions(&fx, "p"), vec![second.id.clone()]);
    assert!(fx
        .segment("p")
        .join(format!("revisions/{}/files/a/b/c.txt", second.id))
        .is_file());
}
