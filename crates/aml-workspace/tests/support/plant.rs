//! What a killed save leaves behind, planted exactly (see `garbage` for the inventory).

use std::fs;
use std::path::Path;
use std::process::{Child, Command};

use aml_workspace::holder::Holder;
use aml_workspace::owners::{millis, OwnerRecord, ORPHAN_STALE};

/// A process of this machine that existed and is gone (SIGKILLed and reaped).
pub fn dead_holder() -> Holder {
    let (mut child, holder) = live_holder();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(holder.is_gone());
    holder
}

/// A process of this machine that runs until the returned child is killed.
pub fn live_holder() -> (Child, Holder) {
    let child = Command::new("sleep").arg("600").spawn().unwrap();
    let holder = Holder::of_process(child.id()).expect("Linux /proc");
    (child, holder)
}

/// A holder on another machine: never provably gone.
pub fn foreign_holder() -> Holder {
    Holder {
        hostname: "elsewhere".into(),
        ..Holder::current().unwrap().clone()
    }
}

/// A `started_at` older than the staleness window.
pub fn long_ago() -> u64 {
    millis(std::time::SystemTime::now()) - ORPHAN_STALE.as_millis() as u64 - 60_000
}

pub fn now() -> u64 {
    millis(std::time::SystemTime::now())
}

/// `owners/<id>.json` beneath the identity root `segment`.
pub fn plant_record(segment: &Path, id: &str, holder: Option<Holder>, started_at: u64) {
    let record = OwnerRecord {
        holder,
        started_at,
        revisions: vec![id.to_string()],
    };
    fs::create_dir_all(segment.join("owners")).unwrap();
    fs::write(
        segment.join(format!("owners/{id}.json")),
        serde_json::to_vec(&record).unwrap(),
    )
    .unwrap();
}

/// An unpublished archive revision (what a save killed after its upload leaves).
pub fn plant_archive(segment: &Path, id: &str) {
    fs::create_dir_all(segment.join("revisions")).unwrap();
    fs::write(segment.join(format!("revisions/{id}.tar.gz")), b"partial").unwrap();
}

/// A folder revision killed half-way: some files, no manifest.
pub fn plant_folder(segment: &Path, id: &str, files: usize) {
    for i in 0..files {
        let path = segment.join(format!("revisions/{id}/files/d{}/f{i}.txt", i % 3));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("{i}")).unwrap();
    }
}

/// A staged write of `holder` (`.aml-tmp-<tag>-<uuid>`) in `dir`.
pub fn plant_scratch(dir: &Path, holder: &Holder) -> std::path::PathBuf {
    fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!(
        ".aml-tmp-{}-{}",
        holder.tag(),
        uuid::Uuid::new_v4().simple()
    ));
    fs::write(&path, b"staged").unwrap();
    path
}

/// A materialization root of `holder` beneath `tmp` with `files` files in its tree.
pub fn plant_materialization(tmp: &Path, name: &str, holder: &Holder, files: usize) {
    let root = tmp.join(format!("aml-workspace-{name}"));
    fs::create_dir_all(root.join("workspace/sub")).unwrap();
    fs::write(root.join("owner.json"), serde_json::to_vec(holder).unwrap()).unwrap();
    for i in 0..files {
        fs::write(root.join(format!("workspace/sub/f{i}")), b"x").unwrap();
    }
}
