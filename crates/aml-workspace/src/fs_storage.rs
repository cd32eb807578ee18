//! The filesystem store (BW-2): objects at `<directory>/<segment(id)>/<path>`, written to a
//! temporary file and renamed into place, versions the SHA-256 hex of the content. A locked
//! lease holds `<segment dir>.lock` (the renewable lock); every conditional replacement also
//! takes the short lock `<object>.lock`, so unlocked writers still compare-and-swap safely.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use crate::blocking::blocking;
use crate::cancel::Cancel;
use crate::error::{is_absent, Result, WorkspaceError};
use crate::lock::{DirLock, LockFailure, LockPolicy, ReleaseFailure};
use crate::paths::{is_storage_path, is_storage_prefix, storage_segment, MAX_SEGMENT_BYTES};
use crate::storage::{
    AcquireRequest, LocalFile, ObjectFile, ReadBody, StorageAdapter, StorageLease, StorageObject,
    Version, WriteBody, WriteCondition, WriteOptions,
};

/// Temporary files start with this; listings skip them (a crashed writer may leave one, which
/// a later save's sweep removes: see `fs_scratch`).
pub use crate::fs_scratch::TEMP_PREFIX;
/// The compare-and-swap lock is held for milliseconds; one older than this was abandoned.
const SHORT_STALE: Duration = Duration::from_secs(10);
const SHORT_PATIENCE: Duration = Duration::from_secs(30);

pub struct FilesystemStorage {
    directory: PathBuf,
    policy: LockPolicy,
}

impl FilesystemStorage {
    pub fn new(directory: PathBuf) -> Self {
        Self::with_policy(directory, LockPolicy::workspace())
    }

    pub fn with_policy(directory: PathBuf, policy: LockPolicy) -> Self {
        FilesystemStorage { directory, policy }
    }

    /// The identity's storage root.
    pub fn root_of(&self, id: &str) -> PathBuf {
        self.directory.join(storage_segment(id))
    }

    pub async fn open(&self, id: &str, lock: bool) -> Result<FilesystemLease> {
        let segment = storage_segment(id);
        if segment.len() > MAX_SEGMENT_BYTES {
            return Err(too_long(id, segment.len()));
        }
        let root = self.directory.join(segment);
        let (policy, at, workspace_id) = (self.policy.clone(), root.clone(), id.to_string());
        let lock = blocking(move || {
            fs::create_dir_all(&at).map_err(|error| {
                lock_failed(&workspace_id).with_cause(WorkspaceError::io(&error, "mkdir", &at))
            })?;
            if !lock {
                return Ok(None);
            }
            match DirLock::acquire(&at, &policy) {
                Ok(lock) => Ok(Some(lock)),
                Err(LockFailure::Held) => Err(WorkspaceError::conflict(&workspace_id)),
                Err(failure) => Err(lock_failed(&workspace_id).with_cause(failure.into_error())),
            }
        })
        .await?;
        if let Some(lock) = &lock {
            lock.start_refresh();
        }
        Ok(FilesystemLease {
            id: id.into(),
            root,
            lock,
            policy: self.policy.clone(),
        })
    }
}

fn lock_failed(id: &str) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Filesystem Workspace \"{id}\" lock acquisition failed"
    ))
}

fn too_long(id: &str, bytes: usize) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Filesystem Workspace \"{id}\" id is too long: its storage segment is {bytes} bytes, at most {MAX_SEGMENT_BYTES} fit the store's file names"
    ))
}

fn compromised(id: &str) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Filesystem Workspace \"{id}\" lock was compromised"
    ))
}

fn invalid_path(path: &str) -> WorkspaceError {
    WorkspaceError::error(format!(
        "Filesystem Workspace storage path \"{path}\" is invalid"
    ))
}

fn conditional_failed() -> WorkspaceError {
    WorkspaceError::error("Filesystem Workspace conditional write failed")
}

#[async_trait]
impl StorageAdapter for FilesystemStorage {
    fn name(&self) -> &str {
        "filesystem"
    }
    async fn acquire(&self, request: AcquireRequest) -> Result<Box<dyn StorageLease>> {
        Ok(Box::new(self.open(&request.id, request.lock).await?))
    }
}

/// One identity's objects.
pub struct FilesystemLease {
    id: String,
    root: PathBuf,
    lock: Option<DirLock>,
    policy: LockPolicy,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn digest_file(path: &Path) -> io::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(sha256_hex(&bytes))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Writes `body` to a new temporary file beside `target`; returns it and the content digest.
/// `top` is the identity's `revisions/` directory when `target` lies beneath it: created
/// first and marked, so every revision's tree is placed apart (see `placement`).
fn stage(target: &Path, body: WriteBody, top: Option<PathBuf>) -> Result<(PathBuf, String)> {
    let parent = target.parent().expect("storage paths have a parent");
    if let Some(top) = top {
        if fs::create_dir(&top).is_ok() {
            crate::placement::mark_top_directory(&top);
        }
    }
    fs::create_dir_all(parent).map_err(|e| WorkspaceError::io(&e, "mkdir", parent))?;
    let temp = parent.join(crate::fs_scratch::scratch_name());
    let written = (|| -> io::Result<String> {
        let mut out = fs::File::create(&temp)?;
        let mut hasher = Sha256::new();
        match body {
            WriteBody::Bytes(bytes) => {
                hasher.update(&bytes);
                out.write_all(&bytes)?;
            }
            WriteBody::File(source) => {
                let mut input = fs::File::open(source)?;
                let mut buffer = vec![0; 1 << 16];
                loop {
                    let n = input.read(&mut buffer)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buffer[..n]);
                    out.write_all(&buffer[..n])?;
                }
            }
        }
        Ok(hex(&hasher.finalize()))
    })();
    match written {
        Ok(digest) => Ok((temp, digest)),
        Err(error) => {
            let _ = fs::remove_file(&temp);
            Err(WorkspaceError::io(&error, "write", &temp))
        }
    }
}

impl FilesystemLease {
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn object(&self, path: &str) -> Result<PathBuf> {
        if !is_storage_path(path) {
            return Err(invalid_path(path));
        }
        Ok(self.root.join(path))
    }

    fn check_lock(&self) -> Result<()> {
        match &self.lock {
            Some(lock) => lock
                .check()
                .map_err(|reason| compromised(&self.id).with_cause(WorkspaceError::error(reason))),
            None => Ok(()),
        }
    }

    async fn replace(&self, target: PathBuf, temp: PathBuf, expected: String) -> Result<()> {
        let short =
            match DirLock::acquire_patiently(&target, &self.short_policy(), SHORT_PATIENCE).await {
                Ok(lock) => lock,
                Err(failure) => {
                    let _ = fs::remove_file(&temp);
                    return Err(lock_failed(&self.id).with_cause(failure.into_error()));
                }
            };
        let at = target.clone();
        let swapped = blocking(move || {
            let current = digest_file(&at).map_err(|e| WorkspaceError::io(&e, "open", &at))?;
            if current.as_deref() != Some(expected.as_str()) {
                let _ = fs::remove_file(&temp);
                return Err(conditional_failed());
            }
            fs::rename(&temp, &at).map_err(|e| WorkspaceError::io(&e, "rename", &at))
        })
        .await;
        let _ = short.release();
        swapped
    }

    fn short_policy(&self) -> LockPolicy {
        LockPolicy {
            stale: SHORT_STALE,
            update: SHORT_STALE,
            clock: self.policy.clock.clone(),
        }
    }
}

#[async_trait]
impl StorageLease for FilesystemLease {
    async fn read(&self, path: &str, _max_bytes: u64) -> Result<Option<StorageObject>> {
        let at = self.object(path)?;
        blocking(move || match fs::read(&at) {
            Ok(bytes) => {
                let version = Version(sha256_hex(&bytes));
                Ok(Some(StorageObject {
                    body: ReadBody::Bytes(bytes),
                    version,
                }))
            }
            Err(error) if is_absent(&error) => Ok(None),
            Err(error) => Err(WorkspaceError::io(&error, "open", &at)),
        })
        .await
    }

    async fn write(&self, path: &str, body: WriteBody, options: WriteOptions) -> Result<Version> {
        let target = self.object(path)?;
        self.check_lock()?;
        let at = target.clone();
        let top = path
            .starts_with("revisions/")
            .then(|| self.root.join("revisions"));
        let (temp, digest) = blocking(move || stage(&at, body, top)).await?;
        match options.condition {
            WriteCondition::None => {
                let at = target.clone();
                blocking(move || {
                    fs::rename(&temp, &at).map_err(|e| WorkspaceError::io(&e, "rename", &at))
                })
                .await?;
            }
            // A hard link fails atomically when the name exists: create-only without a lock.
            WriteCondition::Absent => {
                let at = target.clone();
                blocking(move || {
                    let linked = fs::hard_link(&temp, &at);
                    let _ = fs::remove_file(&temp);
                    match linked {
                        Ok(()) => Ok(()),
                        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                            Err(conditional_failed())
                        }
                        Err(error) => Err(WorkspaceError::io(&error, "link", &at)),
                    }
                })
                .await?;
            }
            WriteCondition::Version(Version(expected)) => {
                self.replace(target, temp, expected).await?
            }
        }
        Ok(Version(digest))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        if !is_storage_prefix(prefix) {
            return Err(invalid_path(prefix));
        }
        let (root, prefix) = (self.root.clone(), prefix.to_string());
        blocking(move || {
            let start = match prefix.rfind('/') {
                Some(slash) => root.join(&prefix[..slash]),
                None => root.clone(),
            };
            let mut found = Vec::new();
            let mut pending = vec![start];
            while let Some(dir) = pending.pop() {
                let entries = match fs::read_dir(&dir) {
                    Ok(entries) => entries,
                    Err(error) if is_absent(&error) => continue,
                    Err(error) => return Err(WorkspaceError::io(&error, "scandir", &dir)),
                };
                for entry in entries {
                    let entry = entry.map_err(|e| WorkspaceError::io(&e, "scandir", &dir))?;
                    let kind = entry
                        .file_type()
                        .map_err(|e| WorkspaceError::io(&e, "lstat", &entry.path()))?;
                    let name = entry.file_name();
                    if kind.is_dir() {
                        pending.push(entry.path());
                    } else if kind.is_file() && !name.to_string_lossy().starts_with(TEMP_PREFIX) {
                        if let Some(rel) =
                            entry.path().strip_prefix(&root).ok().and_then(Path::to_str)
                        {
                            if rel.starts_with(&prefix) {
                                found.push(rel.to_string());
                            }
                        }
                    }
                }
            }
            found.sort_unstable();
            Ok(found)
        })
        .await
    }

    async fn delete(&self, paths: &[String]) -> Result<()> {
        let targets = paths
            .iter()
            .map(|path| self.object(path))
            .collect::<Result<Vec<_>>>()?;
        self.check_lock()?;
        let root = self.root.clone();
        blocking(move || {
            for target in &targets {
                match fs::remove_file(target) {
                    Ok(()) => {}
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                    Err(error) => return Err(WorkspaceError::io(&error, "unlink", target)),
                }
            }
            // Empty directories left behind (a pruned folder revision) go too: each parent
            // once, deepest first, so a 3,000-file revision costs dozens of `rmdir`s, not
            // thousands.
            let mut parents: Vec<&Path> = targets
                .iter()
                .filter_map(|target| target.parent())
                .filter(|at| *at != root && at.starts_with(&root))
                .collect();
            parents.sort_unstable();
            parents.dedup();
            let mut pending: std::collections::BTreeSet<(usize, PathBuf)> = parents
                .into_iter()
                .map(|at| (usize::MAX - at.components().count(), at.to_path_buf()))
                .collect();
            while let Some((_, at)) = pending.pop_first() {
                if fs::remove_dir(&at).is_err() {
                    continue;
                }
                if let Some(up) = at
                    .parent()
                    .filter(|up| *up != root && up.starts_with(&root))
                {
                    pending.insert((usize::MAX - up.components().count(), up.to_path_buf()));
                }
            }
            Ok(())
        })
        .await
    }

    async fn sweep_scratch(&self, budget: usize) -> Result<usize> {
        self.check_lock()?;
        let root = self.root.clone();
        blocking(move || Ok(crate::fs_scratch::sweep(&root, budget))).await
    }

    async fn remove_empty_directories(&self, prefix: &str) -> Result<()> {
        if !is_storage_prefix(prefix) {
            return Err(invalid_path(prefix));
        }
        self.check_lock()?;
        let at = self.root.join(prefix);
        blocking(move || {
            crate::fs_scratch::remove_empty_tree(&at);
            Ok(())
        })
        .await
    }

    async fn write_local_files(&self, files: &[LocalFile], cancel: &Cancel) -> Option<Result<()>> {
        Some(
            async {
                for file in files {
                    self.object(&file.path)?;
                }
                self.check_lock()?;
                let top = self.root.join("revisions");
                blocking(move || {
                    if fs::create_dir(&top).is_ok() {
                        crate::placement::mark_top_directory(&top);
                    }
                    Ok(())
                })
                .await?;
                crate::fs_bulk::write_files(&self.root, files, cancel).await
            }
            .await,
        )
    }

    async fn read_into_files(
        &self,
        files: &[ObjectFile],
        dest: &Path,
        cancel: &Cancel,
    ) -> Option<Result<()>> {
        Some(
            async {
                for file in files {
                    self.object(&file.path)?;
                }
                crate::fs_bulk::read_files(&self.root, files, dest, cancel).await
            }
            .await,
        )
    }

    async fn release(&self) -> Result<()> {
        let Some(lock) = &self.lock else {
            return Ok(());
        };
        match lock.release() {
            Ok(()) | Err(ReleaseFailure::NotHeld) => Ok(()),
            Err(ReleaseFailure::Compromised(reason)) => {
                Err(compromised(&self.id).with_cause(WorkspaceError::error(reason)))
            }
            Err(ReleaseFailure::Io(error)) => Err(error),
        }
    }
}
