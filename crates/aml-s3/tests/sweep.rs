//! The sweep of killed saves' leftovers (issue 22 item 5) over S3: the persistence engine on
//! an S3 lease (in-memory bucket with S3's conditional semantics). What a killed save leaves
//! there: an unpublished archive, some objects of a folder revision, and its owner record
//! `owners/<id>.json`. One more save leaves only indexed revisions; a live writer's objects
//! are kept; the work per save is bounded.

mod support;

use std::process::{Child, Command};
use std::sync::Arc;

use aml_s3::{S3WorkspaceStorage, DEFAULT_PREFIX};
use aml_workspace::holder::Holder;
use aml_workspace::owners::{millis, OwnerRecord};
use aml_workspace::{Format, LoadRequest, Materialization, PersistenceOptions, SaveRequest};
use support::bucket::Bucket;
use support::engine::EngineLease;

const ROOT: &str = "aml/workspaces/ws/";

struct Fixture {
    bucket: Arc<Bucket>,
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            bucket: Arc::new(Bucket::default()),
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    async fn save(&self, format: Format, budget: usize) -> aml_workspace::SweepReport {
        let storage = S3WorkspaceStorage::new(self.bucket.clone(), "bucket", DEFAULT_PREFIX);
        let lease = storage.acquire("ws", true).await.unwrap();
        let mut options = PersistenceOptions::new(self.tmp.path().to_path_buf());
        options.format = format;
        options.sweep_budget = budget;
        let load = LoadRequest {
            revision: "current".into(),
            include: None,
            exclude: vec![],
        };
        let mut ws = Materialization::acquire(Box::new(EngineLease(lease)), options, Some(load))
            .await
            .unwrap();
        let n = self.bucket.keys("").len();
        std::fs::write(ws.directory().join(format!("f{n}.txt")), "x").unwrap();
        let request = SaveRequest {
            gitignore: false,
            retention: 3,
            ..SaveRequest::default()
        };
        ws.save(request).await.unwrap();
        let report = ws.store_sweep().cloned().expect("the sweep ran");
        ws.release().await.unwrap();
        report
    }

    fn indexed(&self) -> Vec<String> {
        let (_, body) =
            self.bucket.objects.lock().unwrap()[&format!("{ROOT}workspace.json")].clone();
        aml_workspace::WorkspaceIndex::parse(&body)
            .unwrap()
            .revisions
            .into_iter()
            .map(|revision| revision.id)
            .collect()
    }

    /// Revision ids with objects in the bucket that the index does not name, and records.
    fn garbage(&self) -> (Vec<String>, Vec<String>) {
        let indexed = self.indexed();
        let mut unindexed: Vec<String> = self
            .bucket
            .keys(&format!("{ROOT}revisions/"))
            .iter()
            .map(|key| {
                let rest = &key[ROOT.len() + "revisions/".len()..];
                let id = rest.split('/').next().unwrap();
                id.trim_end_matches(".tar.gz").to_string()
            })
            .filter(|id| !indexed.contains(id))
            .collect();
        unindexed.dedup();
        (unindexed, self.bucket.keys(&format!("{ROOT}owners/")))
    }

    fn plant_killed(&self, id: &str, holder: &Holder, folder_files: usize) {
        if folder_files == 0 {
            self.bucket
                .plant(&format!("{ROOT}revisions/{id}.tar.gz"), &b"partial"[..]);
        }
        for i in 0..folder_files {
            self.bucket
                .plant(&format!("{ROOT}revisions/{id}/files/f{i}"), &b"x"[..]);
        }
        let record = OwnerRecord {
            holder: Some(holder.clone()),
            started_at: millis(std::time::SystemTime::now()),
            revisions: vec![id.to_string()],
        };
        self.bucket.plant(
            &format!("{ROOT}owners/{id}.json"),
            serde_json::to_vec(&record).unwrap(),
        );
    }
}

fn sleeper() -> (Child, Holder) {
    let child = Command::new("sleep").arg("600").spawn().unwrap();
    let holder = Holder::of_process(child.id()).unwrap();
    (child, holder)
}

fn dead() -> Holder {
    let (mut child, holder) = sleeper();
    child.kill().unwrap();
    child.wait().unwrap();
    holder
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_more_save_removes_killed_saves_revisions_and_records() {
    for format in [Format::Archive, Format::Folder] {
        let fx = Fixture::new();
        fx.save(format, 10_000).await;
        let dead = dead();
        fx.plant_killed("killed-archive", &dead, 0);
        fx.plant_killed("killed-folder", &dead, 30);
        assert_eq!(fx.garbage().0.len(), 2);
        let report = fx.save(format, 10_000).await;
        assert_eq!(fx.garbage(), (vec![], vec![]), "{format:?}: {report:?}");
        assert_eq!(report.revisions, 2);
        assert_eq!(report.objects, 31);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_writers_objects_are_kept_and_go_once_it_died() {
    let fx = Fixture::new();
    fx.save(Format::Folder, 10_000).await;
    let (mut writer, live) = sleeper();
    fx.plant_killed("in-progress", &live, 5);
    fx.save(Format::Folder, 10_000).await;
    let (unindexed, records) = fx.garbage();
    assert_eq!(unindexed, ["in-progress"]);
    assert_eq!(records, [format!("{ROOT}owners/in-progress.json")]);
    writer.kill().unwrap();
    writer.wait().unwrap();
    fx.save(Format::Folder, 10_000).await;
    assert_eq!(fx.garbage(), (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_is_cleaned_within_the_bound_of_each_save() {
    let fx = Fixture::new();
    fx.save(Format::Archive, 10_000).await;
    let dead = dead();
    for i in 0..30 {
        fx.plant_killed(&format!("killed-{i:02}"), &dead, 0);
    }
    let mut saves = 0;
    while fx.garbage() != (vec![], vec![]) {
        let report = fx.save(Format::Archive, 8).await;
        assert!(report.objects + report.records <= 8, "{report:?}");
        saves += 1;
        assert!(saves <= 10, "{:?}", fx.garbage());
    }
    // 30 × (archive + record) = 60 deletions, 8 per save.
    assert_eq!(saves, 8);
}
