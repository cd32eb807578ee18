//! The folder format: `revisions/<id>/files/<path>` objects plus `revisions/<id>/manifest.json`
//! (`{entries:[{mode,path,size,type}],version:1}`), uploaded create-only, manifest last.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use serde::Serialize;
use serde_json::Value;

use crate::blocking::blocking;
use crate::cancel::{Cancel, Phase};
use crate::confine::{create_file, dir_mode, ensure_dir, file_mode, Refused};
use crate::error::{Result, WorkspaceError};
use crate::paths::is_entry_path;
use crate::select::{EntryKind, SnapshotEntry};
use crate::storage::{
    Limited, LocalFile, ObjectFile, StorageLease, WriteBody, WriteCondition, WriteOptions,
};

/// Objects moved at once: enough to hide a remote store's latency, few enough for 2 cores.
const CONCURRENCY: usize = 16;
/// Files up to this size are uploaded from memory; larger ones stream from disk.
const IN_MEMORY_BYTES: u64 = 1 << 20;

#[derive(Serialize)]
struct ManifestEntry<'a> {
    mode: u32,
    path: &'a str,
    size: u64,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Manifest<'a> {
    entries: Vec<ManifestEntry<'a>>,
    version: u32,
}

pub fn prefix(id: &str) -> String {
    format!("revisions/{id}/")
}

fn manifest_path(id: &str) -> String {
    format!("revisions/{id}/manifest.json")
}

fn file_path(id: &str, path: &str) -> String {
    format!("revisions/{id}/files/{path}")
}

/// Runs `jobs` `CONCURRENCY` at a time to the end: after the first failure the remaining ones
/// see `stop` and return at once, but none is dropped mid-way (a dropped future would leave
/// its blocking work or adapter call running after we return and clean up).
async fn run_all(jobs: Vec<BoxFuture<'_, Result<()>>>) -> Result<()> {
    let results: Vec<Result<()>> = stream::iter(jobs)
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    // An abort is reported only when nothing else failed.
    let mut first_abort = None;
    for result in results {
        match result {
            Ok(()) => {}
            Err(error) if crate::cancel::is_aborted(&error) => {
                first_abort.get_or_insert(error);
            }
            Err(error) => return Err(error),
        }
    }
    first_abort.map_or(Ok(()), Err)
}

/// Uploads the snapshot `entries` of `root` as folder revision `id`.
pub async fn upload(
    lease: &dyn StorageLease,
    root: &Path,
    id: &str,
    entries: &[SnapshotEntry],
    cancel: &Cancel,
) -> Result<()> {
    let files: Vec<LocalFile> = entries
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|entry| LocalFile {
            path: file_path(id, &entry.path),
            source: root.join(&entry.path),
            size: entry.size,
        })
        .collect();
    match lease.write_local_files(&files, cancel).await {
        Some(result) => result?,
        None => upload_each(lease, &files, cancel).await?,
    }
    cancel.check(Phase::Save)?;
    write_manifest(lease, id, entries).await
}

/// One `write` per file (stores without a bulk path), stopping at the first failure or abort.
async fn upload_each(lease: &dyn StorageLease, files: &[LocalFile], cancel: &Cancel) -> Result<()> {
    each_until_failure(files, |file| Box::pin(upload_one(lease, file, cancel))).await
}

/// Runs `job` for every item through `run_all`; after the first failure the jobs not yet
/// begun return at once. The one stop rule for uploads and restores alike.
async fn each_until_failure<'a, T: Sync>(
    items: &'a [T],
    job: impl Fn(&'a T) -> BoxFuture<'a, Result<()>>,
) -> Result<()> {
    let stop = Cancel::new();
    let jobs: Vec<BoxFuture<'a, Result<()>>> = items
        .iter()
        .map(|item| -> BoxFuture<'a, Result<()>> {
            let stop = stop.clone();
            let work = job(item);
            Box::pin(async move {
                if stop.is_cancelled() {
                    return Ok(());
                }
                let outcome = work.await;
                if outcome.is_err() {
                    stop.cancel();
                }
                outcome
            })
        })
        .collect();
    run_all(jobs).await
}

async fn upload_one(lease: &dyn StorageLease, file: &LocalFile, cancel: &Cancel) -> Result<()> {
    cancel.entry(Phase::Save, &file.path)?;
    let (local, size) = (file.source.clone(), file.size);
    let body = if size <= IN_MEMORY_BYTES {
        let at = local.clone();
        WriteBody::Bytes(
            blocking(move || fs::read(&at).map_err(|e| WorkspaceError::io(&e, "open", &at)))
                .await?,
        )
    } else {
        WriteBody::File(local)
    };
    let mut options = WriteOptions::new(WriteCondition::Absent);
    options.content_type = Some("application/octet-stream".into());
    options.content_length = Some(size);
    lease.write(&file.path, body, options).await.map(|_| ())
}

async fn write_manifest(
    lease: &dyn StorageLease,
    id: &str,
    entries: &[SnapshotEntry],
) -> Result<()> {
    let manifest = Manifest {
        entries: entries
            .iter()
            .map(|entry| ManifestEntry {
                mode: entry.mode,
                path: &entry.path,
                size: entry.size,
                kind: entry.kind.as_str(),
            })
            .collect(),
        version: 1,
    };
    let bytes = serde_json::to_vec(&manifest).expect("a manifest always serializes");
    let mut options = WriteOptions::new(WriteCondition::Absent);
    options.content_type = Some("application/json".into());
    options.content_length = Some(bytes.len() as u64);
    lease
        .write(&manifest_path(id), WriteBody::Bytes(bytes), options)
        .await?;
    Ok(())
}

/// Deletes every object of folder revision `id`.
pub async fn remove(lease: &dyn StorageLease, id: &str) -> Result<()> {
    let objects = lease.list(&prefix(id)).await?;
    if objects.is_empty() {
        return Ok(());
    }
    lease.delete(&objects).await
}

/// Restore bounds for a folder revision.
#[derive(Clone, Copy, Debug)]
pub struct FolderLimits {
    pub max_manifest_bytes: u64,
    pub max_entries: u64,
    pub max_extracted_bytes: u64,
}

struct Planned {
    path: String,
    kind: EntryKind,
    mode: u32,
    size: u64,
}

fn parse_manifest(bytes: &[u8], limits: FolderLimits) -> Result<Vec<Planned>> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|_| WorkspaceError::error("Workspace folder manifest is not valid JSON"))?;
    let invalid = || WorkspaceError::error("Workspace folder manifest is invalid");
    let object = value.as_object().ok_or_else(invalid)?;
    if object.get("version").and_then(Value::as_u64) != Some(1) {
        return Err(invalid());
    }
    let listed = object
        .get("entries")
        .and_then(Value::as_array)
        .ok_or_else(invalid)?;
    if listed.len() as u64 > limits.max_entries {
        return Err(WorkspaceError::range(format!(
            "Workspace folder manifest exceeded {} entries",
            limits.max_entries
        )));
    }
    let bad_entry = || WorkspaceError::error("Workspace folder manifest contains an invalid entry");
    let mut planned = Vec::with_capacity(listed.len());
    let mut total: u64 = 0;
    for entry in listed {
        let entry = entry.as_object().ok_or_else(bad_entry)?;
        let mode = entry
            .get("mode")
            .and_then(Value::as_u64)
            .filter(|m| *m <= 0o7777);
        let size = entry
            .get("size")
            .and_then(Value::as_u64)
            .filter(|s| *s < (1 << 53));
        let kind = match entry.get("type").and_then(Value::as_str) {
            Some("file") => Some(EntryKind::File),
            Some("directory") => Some(EntryKind::Directory),
            _ => None,
        };
        let path = entry.get("path").and_then(Value::as_str);
        let (Some(mode), Some(size), Some(kind), Some(path)) = (mode, size, kind, path) else {
            return Err(bad_entry());
        };
        if kind == EntryKind::Directory && size != 0 {
            return Err(bad_entry());
        }
        if !is_entry_path(path) {
            return Err(WorkspaceError::error(format!(
                "Workspace snapshot contains unsafe path \"{path}\""
            )));
        }
        total = total.saturating_add(size);
        if total > limits.max_extracted_bytes {
            return Err(WorkspaceError::range(format!(
                "Workspace folder manifest exceeded {} extracted bytes",
                limits.max_extracted_bytes
            )));
        }
        planned.push(Planned {
            path: path.into(),
            kind,
            mode: mode as u32,
            size,
        });
    }
    let mut paths: Vec<&str> = planned.iter().map(|p| p.path.as_str()).collect();
    paths.sort_unstable();
    if let Some(pair) = paths.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(WorkspaceError::error(format!(
            "Workspace folder manifest contains duplicate path \"{}\"",
            pair[0]
        )));
    }
    Ok(planned)
}

fn unsafe_path(path: &str) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Workspace snapshot contains unsafe path \"{path}\""
    ))
}

pub(crate) fn refusal(refused: Refused, path: &str) -> WorkspaceError {
    match refused {
        Refused::Unsafe => unsafe_path(path),
        Refused::Io(error, at) => WorkspaceError::io(&error, "open", &at),
    }
}

/// Restores folder revision `id` into the empty directory `dest`.
pub async fn restore(
    lease: &dyn StorageLease,
    id: &str,
    dest: &Path,
    limits: FolderLimits,
    cancel: &Cancel,
) -> Result<()> {
    let object = lease
        .read(&manifest_path(id), limits.max_manifest_bytes)
        .await?
        .ok_or_else(|| {
            WorkspaceError::error("Workspace folder revision is missing its manifest")
        })?;
    let bytes = match object.body.collect(limits.max_manifest_bytes).await? {
        Limited::Within(bytes) => bytes,
        Limited::Exceeded => {
            return Err(WorkspaceError::range(format!(
                "Workspace folder manifest exceeded {} bytes",
                limits.max_manifest_bytes
            )))
        }
    };
    let planned = parse_manifest(&bytes, limits)?;
    // Directories first (and parents before children), so file writes find their parents.
    let dest_dirs = dest.to_path_buf();
    let dirs: Vec<(String, u32)> = planned
        .iter()
        .filter(|p| p.kind == EntryKind::Directory)
        .map(|p| (p.path.clone(), p.mode))
        .collect();
    let made = dirs.clone();
    blocking(move || {
        for (path, _) in &made {
            ensure_dir(&dest_dirs, path).map_err(|r| refusal(r, path))?;
        }
        Ok(())
    })
    .await?;
    let files: Vec<ObjectFile> = planned
        .iter()
        .filter(|p| p.kind == EntryKind::File)
        .map(|entry| ObjectFile {
            path: file_path(id, &entry.path),
            entry: entry.path.clone(),
            size: entry.size,
            mode: entry.mode,
        })
        .collect();
    match lease.read_into_files(&files, dest, cancel).await {
        Some(result) => result?,
        None => restore_each(lease, &files, dest, cancel).await?,
    }
    let dest = dest.to_path_buf();
    blocking(move || {
        for (path, mode) in dirs.iter().rev() {
            let full = dest.join(path);
            fs::set_permissions(&full, fs::Permissions::from_mode(dir_mode(*mode)))
                .map_err(|e| WorkspaceError::io(&e, "chmod", &full))?;
        }
        Ok(())
    })
    .await
}

/// One `read` per file (stores without a bulk path), stopping at the first failure or abort.
async fn restore_each(
    lease: &dyn StorageLease,
    files: &[ObjectFile],
    dest: &Path,
    cancel: &Cancel,
) -> Result<()> {
    each_until_failure(files, |file| {
        Box::pin(restore_one(lease, file, dest, cancel))
    })
    .await
}

async fn restore_one(
    lease: &dyn StorageLease,
    file: &ObjectFile,
    dest: &Path,
    cancel: &Cancel,
) -> Result<()> {
    cancel.entry(Phase::Restore, &file.entry)?;
    let object = lease
        .read(&file.path, file.size)
        .await?
        .ok_or_else(|| missing(&file.entry))?;
    let bytes = match object.body.collect(file.size).await? {
        Limited::Within(bytes) if bytes.len() as u64 == file.size => bytes,
        _ => return Err(unexpected_size(&file.entry)),
    };
    let (dest, path, mode) = (dest.to_path_buf(), file.entry.clone(), file.mode);
    blocking(move || write_entry(&dest, &path, &bytes, mode)).await
}

pub(crate) fn missing(entry: &str) -> WorkspaceError {
    WorkspaceError::error(format!("Workspace folder revision is missing \"{entry}\""))
}

pub(crate) fn unexpected_size(entry: &str) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Workspace folder entry \"{entry}\" has an unexpected size"
    ))
}

fn write_entry(dest: &Path, rel: &str, bytes: &[u8], mode: u32) -> Result<()> {
    let (mut file, path): (fs::File, PathBuf) =
        create_file(dest, rel).map_err(|r| refusal(r, rel))?;
    file.write_all(bytes)
        .map_err(|e| WorkspaceError::io(&e, "write", &path))?;
    fs::set_permissions(&path, fs::Permissions::from_mode(file_mode(mode)))
        .map_err(|e| WorkspaceError::io(&e, "chmod", &path))
}
