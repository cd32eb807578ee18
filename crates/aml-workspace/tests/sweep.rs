//! The sweep of what killed saves leave (issue 22 item 5), over the exact leftovers a kill
//! leaves at each point of a save: an unpublished archive, a half-written folder revision,
//! staged `.aml-tmp-*` writes, owner records, and materialization roots of dead processes.
//! One more save must leave only indexed revisions; nothing a live writer may still use is
//! touched; the work per save is bounded. (`faults.rs` does the same with real SIGKILLs.)
mod support;

use std::fs;

use aml_workspace::Format;
use support::garbage::garbage;
use support::plant::*;
use support::{current, save_all, write, Fixture};

const ID: &str = "swept";

/// A store with one published revision, and a fresh lease on it.
async fn seeded(fx: &Fixture, format: Format) {
    let mut ws = fx.open(ID, format, None, true).await.unwrap();
    write(ws.directory(), "a.txt", "a");
    ws.save(save_all()).await.unwrap();
    ws.release().await.unwrap();
}

async fn one_more_save(fx: &Fixture, format: Format) -> aml_workspace::SweepReport {
    let mut ws = fx.open(ID, format, current(), true).await.unwrap();
    write(ws.directory(), "b.txt", "b");
    ws.save(save_all()).await.unwrap();
    let report = ws.store_sweep().cloned().expect("the sweep ran");
    ws.release().await.unwrap();
    report
}

#[tokio::test]
async fn one_more_save_removes_every_leftover_of_killed_saves() {
    for format in [Format::Archive, Format::Folder] {
        let fx = Fixture::new();
        seeded(&fx, format).await;
        let segment = fx.segment(ID);
        let dead = dead_holder();
        // Killed after its archive upload, before publication.
        plant_archive(&segment, "killed-archive");
        plant_record(&segment, "killed-archive", Some(dead.clone()), now());
        // Killed half-way through a folder upload.
        plant_folder(&segment, "killed-folder", 25);
        plant_record(&segment, "killed-folder", Some(dead.clone()), now());
        // Killed between a folder upload's `mkdir` and its first file.
        fs::create_dir_all(segment.join("revisions/killed-mkdir/files/d0")).unwrap();
        fs::create_dir_all(segment.join("revisions/killed-folder/files/empty")).unwrap();
        plant_record(&segment, "killed-mkdir", Some(dead.clone()), now());
        // Killed after writing its record, before any upload.
        plant_record(&segment, "killed-early", Some(dead.clone()), now());
        // Killed while staging: the index, an archive, an owner record.
        plant_scratch(&segment, &dead);
        plant_scratch(&segment.join("revisions"), &dead);
        plant_scratch(&segment.join("owners"), &dead);
        plant_scratch(&segment.join("revisions/killed-folder"), &dead);
        // Killed after publication, before deleting its record: the revision is indexed.
        let published = support::garbage::indexed(&segment)[0].clone();
        plant_record(&segment, &published, Some(dead.clone()), now());
        // Killed while materialized.
        plant_materialization(&fx.tmp(), "dead01", &dead, 40);
        plant_materialization(&fx.tmp(), "dead02", &dead, 3);
        let before = garbage(&segment, &fx.tmp());
        assert_eq!(before.unindexed.len(), 3, "{before:?}");
        assert_eq!(before.materializations.len(), 2, "{before:?}");

        let report = one_more_save(&fx, format).await;

        let after = garbage(&segment, &fx.tmp());
        assert!(after.is_empty(), "{format:?}: {after:?} ({report:?})");
        assert_eq!(report.revisions, 2, "{report:?}");
        assert_eq!(report.scratch, 4, "{report:?}");
        assert!(!report.exhausted);
        // The published revisions are intact and restore.
        let mut ws = fx.open(ID, format, current(), false).await.unwrap();
        assert_eq!(
            fs::read_to_string(ws.directory().join("b.txt")).unwrap(),
            "b"
        );
        ws.release().await.unwrap();
    }
}

#[tokio::test]
async fn a_live_writers_uploads_scratch_and_materialization_are_kept() {
    let fx = Fixture::new();
    seeded(&fx, Format::Folder).await;
    let segment = fx.segment(ID);
    let (mut writer, live) = live_holder();
    // A save in progress by a live process, started long ago (a slow upload).
    plant_folder(&segment, "in-progress", 10);
    plant_record(&segment, "in-progress", Some(live.clone()), long_ago());
    let staged = plant_scratch(&segment.join("revisions"), &live);
    plant_materialization(&fx.tmp(), "live01", &live, 5);
    // Unknown owners: another host's recent save, and a revision nobody claims.
    plant_archive(&segment, "foreign");
    plant_record(&segment, "foreign", Some(foreign_holder()), now());
    plant_archive(&segment, "unclaimed");
    plant_materialization(&fx.tmp(), "foreign", &foreign_holder(), 1);

    let report = one_more_save(&fx, Format::Folder).await;
    let left = garbage(&segment, &fx.tmp());
    assert_eq!(left.unindexed, ["foreign", "in-progress", "unclaimed"]);
    assert!(staged.exists(), "a live writer's staged write is kept");
    assert_eq!(
        left.materializations,
        ["aml-workspace-foreign", "aml-workspace-live01"]
    );
    assert_eq!(
        fs::read_dir(fx.tmp().join("aml-workspace-live01/workspace/sub"))
            .unwrap()
            .count(),
        5,
        "a live materialization is untouched"
    );
    assert_eq!(report.objects, 0, "{report:?}");
    assert_eq!(
        report.sightings, 1,
        "the unclaimed revision is dated: {report:?}"
    );

    // The writer dies: its leftovers go at the next save. The sighting and the foreign
    // record age past the window: those go too (the foreign materialization never does).
    writer.kill().unwrap();
    writer.wait().unwrap();
    plant_record(&segment, "unclaimed", None, long_ago());
    plant_record(&segment, "foreign", Some(foreign_holder()), long_ago());
    one_more_save(&fx, Format::Folder).await;
    let left = garbage(&segment, &fx.tmp());
    assert!(left.unindexed.is_empty(), "{left:?}");
    assert!(left.records.is_empty(), "{left:?}");
    assert!(!staged.exists());
    assert_eq!(left.materializations, ["aml-workspace-foreign"]);
}

#[tokio::test]
async fn a_large_backlog_is_cleaned_over_several_bounded_saves() {
    let fx = Fixture::new();
    seeded(&fx, Format::Folder).await;
    let segment = fx.segment(ID);
    let dead = dead_holder();
    for i in 0..12 {
        plant_folder(&segment, &format!("killed-{i:02}"), 7);
        plant_record(
            &segment,
            &format!("killed-{i:02}"),
            Some(dead.clone()),
            now(),
        );
        plant_materialization(&fx.tmp(), &format!("dead{i:02}"), &dead, 7);
    }
    let budget = 20;
    let mut saves = 0;
    loop {
        let mut options = fx.options(Format::Folder);
        options.sweep_budget = budget;
        let lease = aml_workspace::StorageAdapter::acquire(
            &fx.storage(),
            aml_workspace::AcquireRequest {
                evaluation_id: "e".into(),
                id: ID.into(),
                lock: true,
            },
        )
        .await
        .unwrap();
        let mut ws = aml_workspace::Materialization::acquire(lease, options, current())
            .await
            .unwrap();
        let swept = ws.materialization_sweep().clone();
        assert!(swept.entries <= budget, "{swept:?}");
        write(ws.directory(), "n.txt", &saves.to_string());
        ws.save(save_all()).await.unwrap();
        let report = ws.store_sweep().cloned().unwrap();
        ws.release().await.unwrap();
        let spent = report.objects + report.records + report.scratch + report.sightings;
        assert!(spent <= budget, "save {saves} spent {spent}: {report:?}");
        saves += 1;
        let left = garbage(&segment, &fx.tmp());
        if left.is_empty() {
            break;
        }
        assert!(report.exhausted || swept.exhausted, "{left:?}");
        assert!(saves < 20, "the backlog shrinks every save: {left:?}");
    }
    // 12 × (7 files + 1 record) = 96 store deletions at 20 per save.
    assert!(saves >= 5, "{saves} saves");
}
