//! Shared helpers for the integration tests.
#![allow(dead_code, clippy::new_without_default)]

pub mod garbage;
pub mod plant;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use aml_workspace::{
    AcquireRequest, FilesystemStorage, Format, LoadRequest, Materialization, PersistenceOptions,
    SaveRequest, StorageAdapter,
};

pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("store")).unwrap();
        fs::create_dir(dir.path().join("tmp")).unwrap();
        Fixture { dir }
    }
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }
    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }
    pub fn storage(&self) -> FilesystemStorage {
        FilesystemStorage::new(self.store())
    }
    pub fn options(&self, format: Format) -> PersistenceOptions {
        let mut options = PersistenceOptions::new(self.tmp());
        options.format = format;
        options
    }
    pub async fn open(
        &self,
        id: &str,
        format: Format,
        load: Option<LoadRequest>,
        lock: bool,
    ) -> aml_workspace::Result<Materialization> {
        let lease = self
            .storage()
            .acquire(AcquireRequest {
                evaluation_id: "e".into(),
                id: id.into(),
                lock,
            })
            .await?;
        Materialization::acquire(lease, self.options(format), load).await
    }
    pub fn segment(&self, id: &str) -> PathBuf {
        self.store().join(aml_workspace::paths::storage_segment(id))
    }
}

pub fn current() -> Option<LoadRequest> {
    Some(LoadRequest {
        revision: "current".into(),
        include: None,
        exclude: vec![],
    })
}

pub fn save_all() -> SaveRequest {
    SaveRequest {
        include: None,
        exclude: vec![],
        gitignore: false,
        retention: 5,
    }
}

pub fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::File::create(path)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
}

/// Every entry under `root` as (path, content or "<dir>"), sorted.
pub fn tree(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if entry.file_type().unwrap().is_dir() {
                out.push((rel, "<dir>".into()));
                pending.push(entry.path());
            } else {
                out.push((
                    rel,
                    fs::read_to_string(entry.path()).unwrap_or_else(|_| "<binary>".into()),
                ));
            }
        }
    }
    out.sort();
    out
}
