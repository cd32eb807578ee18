//! The revision lifecycle (WP-1) over any [`StorageLease`]: materialize (restore the selected
//! revision into a fresh temporary directory), save (snapshot, upload an immutable artifact,
//! publish `workspace.json` conditionally, prune), release (remove the temporary root,
//! release storage). The same code runs for the filesystem store, S3 and JS adapters.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tokio::io::AsyncWriteExt;

use crate::archive::{self, ExtractLimits, CONTENT_TYPE};
use crate::blocking::blocking;
use crate::cancel::{Cancel, Phase};
use crate::error::{Result, WorkspaceError};
use crate::folder::{self, FolderLimits};
use crate::full_disk::out_of_space;
use crate::index::{iso_timestamp, Format, Revision, WorkspaceIndex, INDEX_PATH, MAX_INDEX_BYTES};
use crate::materializations::{self, MaterializationSweep};
use crate::owners::{self, OwnerRecord};
use crate::select::{self, Selection, SnapshotLimits};
use crate::storage::{
    Limited, ReadBody, StorageLease, Version, WriteBody, WriteCondition, WriteOptions,
};
use crate::sweep::{self, SweepReport};

pub use crate::requests::{LoadRequest, PersistenceOptions, SaveRequest};

/// One acquired, materialized Workspace.
pub struct Materialization {
    lease: Box<dyn StorageLease>,
    options: PersistenceOptions,
    root: PathBuf,
    directory: PathBuf,
    index: Option<WorkspaceIndex>,
    version: Option<Version>,
    revision_id: Option<String>,
    released: bool,
    materialization_sweep: MaterializationSweep,
    store_sweep: Option<SweepReport>,
}

/// `mkdtemp(<parent>/aml-workspace-XXXXXX)`, owned by this process (`owner.json`).
fn make_temporary_root(parent: &Path) -> Result<PathBuf> {
    loop {
        let suffix: String = uuid::Uuid::new_v4().simple().to_string()[..6].into();
        let root = parent.join(format!("aml-workspace-{suffix}"));
        match std::fs::create_dir(&root) {
            Ok(()) => {
                materializations::record_owner(&root);
                crate::placement::mark_top_directory(&root);
                return Ok(root);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(WorkspaceError::io(&error, "mkdtemp", &root)),
        }
    }
}

/// Creates the materialization directory `<root>/workspace`. It is made under a random name
/// and renamed: beneath the marked root the allocator places a new directory by its name's
/// hash, and a fixed name would put every materialization in the same block group, right
/// where the previous one was just deleted (see `placement`).
fn make_tree_directory(directory: &Path) -> Result<()> {
    let parent = directory
        .parent()
        .expect("the materialization has a parent");
    let made = parent.join(format!(".tree-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&made).map_err(|e| WorkspaceError::io(&e, "mkdir", &made))?;
    std::fs::rename(&made, directory).map_err(|e| WorkspaceError::io(&e, "rename", directory))
}

async fn remove_tree(path: &Path) -> Result<()> {
    match tokio::fs::remove_dir_all(path).await {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(WorkspaceError::io(&error, "rm", path)),
    }
}

/// Reads and validates `workspace.json`; `None` when it does not exist (a new Workspace).
pub async fn read_index(lease: &dyn StorageLease) -> Result<Option<(WorkspaceIndex, Version)>> {
    let Some(object) = lease.read(INDEX_PATH, MAX_INDEX_BYTES).await? else {
        return Ok(None);
    };
    match object.body.collect(MAX_INDEX_BYTES).await? {
        Limited::Within(bytes) => Ok(Some((WorkspaceIndex::parse(&bytes)?, object.version))),
        Limited::Exceeded => Err(WorkspaceError::range(format!(
            "Workspace index exceeded {MAX_INDEX_BYTES} bytes"
        ))),
    }
}

impl Materialization {
    /// Materializes `lease` (already acquired): a new temporary root, the index, and the
    /// requested revision. On failure the root is removed and the lease released.
    pub async fn acquire(
        lease: Box<dyn StorageLease>,
        options: PersistenceOptions,
        load: Option<LoadRequest>,
    ) -> Result<Materialization> {
        Self::acquire_cancellable(lease, options, load, &Cancel::new()).await
    }

    /// [`Materialization::acquire`] that stops at the next file once `cancel` fires: the
    /// temporary root is removed, storage released, and the abort error returned.
    pub async fn acquire_cancellable(
        lease: Box<dyn StorageLease>,
        options: PersistenceOptions,
        load: Option<LoadRequest>,
        cancel: &Cancel,
    ) -> Result<Materialization> {
        if let Err(error) = cancel.check(Phase::Restore) {
            return Err(Self::abandon(lease, None, error).await);
        }
        let (parent, budget) = (options.temporary_directory.clone(), options.sweep_budget);
        // The new root first (it is ours, so the sweep skips it), then dead processes' roots.
        let made = blocking(move || {
            let root = make_temporary_root(&parent)?;
            let swept = materializations::sweep(&parent, &root, budget);
            Ok((root, swept))
        });
        let (root, materialization_sweep) = match made.await {
            Ok(made) => made,
            Err(error) => return Err(Self::abandon(lease, None, error).await),
        };
        let mut materialization = Materialization {
            directory: root.join("workspace"),
            root,
            lease,
            options,
            index: None,
            version: None,
            revision_id: None,
            released: false,
            materialization_sweep,
            store_sweep: None,
        };
        match materialization.restore(load, cancel).await {
            Ok(()) => Ok(materialization),
            Err(error) => {
                let Materialization { lease, root, .. } = materialization;
                Err(Self::abandon(lease, Some(root), error).await)
            }
        }
    }

    async fn abandon(
        lease: Box<dyn StorageLease>,
        root: Option<PathBuf>,
        error: WorkspaceError,
    ) -> WorkspaceError {
        let mut failures = vec![error];
        if let Some(root) = root {
            if let Err(cleanup) = remove_tree(&root).await {
                failures.push(cleanup);
            }
        }
        if let Err(release) = lease.release().await {
            failures.push(release);
        }
        if failures.len() == 1 {
            return failures.pop().expect("one failure");
        }
        WorkspaceError::aggregate("Workspace acquisition and cleanup failed", failures)
    }

    async fn restore(&mut self, load: Option<LoadRequest>, cancel: &Cancel) -> Result<()> {
        let directory = self.directory.clone();
        blocking(move || make_tree_directory(&directory)).await?;
        if let Some((index, version)) = read_index(&*self.lease).await? {
            self.index = Some(index);
            self.version = Some(version);
        }
        let Some(load) = load else { return Ok(()) };
        let revision = match (&self.index, load.revision.as_str()) {
            (None, "current") => return Ok(()),
            (Some(index), "current") => index.current_revision().cloned(),
            (index, named) => index.as_ref().and_then(|index| index.find(named).cloned()),
        };
        let revision = revision.ok_or_else(|| {
            WorkspaceError::error(format!(
                "Workspace revision \"{}\" does not exist",
                load.revision
            ))
        })?;
        cancel.check(Phase::Restore)?;
        match revision.format {
            Format::Archive => self.restore_archive(&revision, cancel).await?,
            Format::Folder => {
                let limits = FolderLimits {
                    max_manifest_bytes: self.options.max_archive_bytes,
                    max_entries: self.options.max_entries,
                    max_extracted_bytes: self.options.max_extracted_bytes,
                };
                folder::restore(&*self.lease, &revision.id, &self.directory, limits, cancel)
                    .await?;
            }
        }
        cancel.check(Phase::Restore)?;
        self.revision_id = Some(revision.id);
        let directory = self.directory.clone();
        blocking(move || select::prune(&directory, load.include.as_deref(), &load.exclude)).await
    }

    async fn restore_archive(&self, revision: &Revision, cancel: &Cancel) -> Result<()> {
        let max = self.options.max_archive_bytes;
        let object = self.lease.read(&revision.path, max).await?.ok_or_else(|| {
            WorkspaceError::error(format!(
                "Workspace archive revision \"{}\" does not exist",
                revision.id
            ))
        })?;
        let exceeded = || WorkspaceError::range(format!("Workspace archive exceeded {max} bytes"));
        let staged = self.root.join("restore.tar.gz");
        match object.body {
            ReadBody::Bytes(bytes) => {
                if bytes.len() as u64 > max {
                    return Err(exceeded());
                }
                let at = staged.clone();
                blocking(move || {
                    let mut file = std::fs::File::create(&at)
                        .map_err(|e| WorkspaceError::io(&e, "open", &at))?;
                    file.write_all(&bytes)
                        .map_err(|e| WorkspaceError::io(&e, "write", &at))
                })
                .await?;
            }
            ReadBody::Stream(stream) => {
                let mut file = tokio::fs::File::create(&staged)
                    .await
                    .map_err(|e| WorkspaceError::io(&e, "open", &staged))?;
                let mut limited = tokio::io::AsyncReadExt::take(stream, max + 1);
                let copied = tokio::io::copy(&mut limited, &mut file)
                    .await
                    .map_err(|e| WorkspaceError::io(&e, "write", &staged))?;
                file.flush()
                    .await
                    .map_err(|e| WorkspaceError::io(&e, "write", &staged))?;
                if copied > max {
                    return Err(exceeded());
                }
            }
        }
        let limits = ExtractLimits {
            max_entries: self.options.max_entries,
            max_extracted_bytes: self.options.max_extracted_bytes,
        };
        let dest = self.directory.clone();
        let source = staged.clone();
        let cancel = cancel.clone();
        let result =
            blocking(move || archive::extract_archive(&source, &dest, limits, &cancel)).await;
        let _ = tokio::fs::remove_file(&staged).await;
        result
    }

    pub fn directory(&self) -> &Path {
        &self.directory
    }
    pub fn revision_id(&self) -> Option<&str> {
        self.revision_id.as_deref()
    }
    pub fn index(&self) -> Option<&WorkspaceIndex> {
        self.index.as_ref()
    }
    pub fn lease(&self) -> &dyn StorageLease {
        &*self.lease
    }
    /// What this acquisition's sweep of the temporary directory removed.
    pub fn materialization_sweep(&self) -> &MaterializationSweep {
        &self.materialization_sweep
    }
    /// What the last successful save's store sweep removed (`None` before one, or when it
    /// failed: a sweep never fails a save).
    pub fn store_sweep(&self) -> Option<&SweepReport> {
        self.store_sweep.as_ref()
    }

    /// Snapshots the materialization and publishes it as the new current revision.
    pub async fn save(&mut self, request: SaveRequest) -> Result<Revision> {
        self.save_cancellable(request, &Cancel::new()).await
    }

    /// [`Materialization::save`] that stops at the next file once `cancel` fires, up to
    /// publication: an interrupted save deletes what it uploaded and publishes nothing.
    pub async fn save_cancellable(
        &mut self,
        request: SaveRequest,
        cancel: &Cancel,
    ) -> Result<Revision> {
        let saved = self.snapshot_and_publish(request, cancel).await;
        saved.map_err(|error| out_of_space(self.options.workspace_id.as_deref(), error))
    }

    async fn snapshot_and_publish(
        &mut self,
        request: SaveRequest,
        cancel: &Cancel,
    ) -> Result<Revision> {
        cancel.check(Phase::Save)?;
        let limits = SnapshotLimits {
            max_entries: self.options.max_entries,
            max_bytes: self.options.max_extracted_bytes,
            extra_entries: u64::from(self.options.format == Format::Archive),
        };
        let directory = self.directory.clone();
        let entries = blocking(move || {
            let selection = Selection::new(
                request.include.as_deref(),
                &request.exclude,
                request.gitignore,
            )?;
            select::snapshot(&directory, &selection, limits)
        })
        .await?;
        let id = uuid::Uuid::new_v4().to_string();
        let format = self.options.format;
        let revision = Revision {
            created_at: iso_timestamp(SystemTime::now()),
            format,
            id: id.clone(),
            path: format.revision_path(&id),
        };
        // Before the first upload: a later save must be able to tell a kill from here on
        // from a live save (see `sweep`). It names the revisions this save would prune too,
        // so a kill while pruning is finished as well. Best effort: without it a killed
        // save's upload is only dated by a later sweep and removed after `ORPHAN_STALE`.
        let (_, would_drop) =
            WorkspaceIndex::publish(self.index.as_ref(), revision.clone(), request.retention);
        let owned = std::iter::once(id.clone())
            .chain(would_drop.into_iter().map(|old| old.id))
            .collect();
        let record = OwnerRecord::ours(owned);
        let _ = owners::write(&*self.lease, &id, &record, WriteCondition::None).await;
        self.store_sweep = None;
        match format {
            Format::Archive => {
                if let Err(error) = self.upload_archive(&revision, entries, cancel).await {
                    return Err(self.disown(&id, error).await);
                }
            }
            Format::Folder => {
                if let Err(error) =
                    folder::upload(&*self.lease, &self.directory, &id, &entries, cancel).await
                {
                    return Err(match folder::remove(&*self.lease, &id).await {
                        Ok(()) => self.disown(&id, error).await,
                        Err(cleanup) => WorkspaceError::aggregate(
                            "Workspace folder upload and cleanup failed",
                            vec![error, cleanup],
                        ),
                    });
                }
            }
        }
        // The last point an abort stops at: publication is one atomic write.
        if let Err(error) = cancel.check(Phase::Save) {
            return Err(match self.remove_revision(&revision).await {
                Ok(()) => self.disown(&id, error).await,
                Err(cleanup) => WorkspaceError::aggregate(
                    "Workspace save and orphan cleanup failed",
                    vec![error, cleanup],
                ),
            });
        }
        let (index, dropped) =
            WorkspaceIndex::publish(self.index.as_ref(), revision.clone(), request.retention);
        let condition = match &self.version {
            Some(version) => WriteCondition::Version(version.clone()),
            None => WriteCondition::Absent,
        };
        let bytes = index.to_bytes();
        let mut options = WriteOptions::new(condition);
        options.content_type = Some("application/json".into());
        options.content_length = Some(bytes.len() as u64);
        match self
            .lease
            .write(INDEX_PATH, WriteBody::Bytes(bytes), options)
            .await
        {
            Ok(version) => {
                self.version = Some(version);
                self.index = Some(index);
            }
            Err(error) => {
                return Err(match self.remove_revision(&revision).await {
                    Ok(()) => self.disown(&id, error).await,
                    Err(cleanup) => WorkspaceError::aggregate(
                        "Workspace save and orphan cleanup failed",
                        vec![error, cleanup],
                    ),
                });
            }
        }
        // Pruning after publication: a failure leaves unreachable objects, never a broken
        // index, so it does not fail the save.
        for old in dropped {
            let _ = self.remove_revision(&old).await;
        }
        let _ = self.lease.delete(&[owners::record_path(&id)]).await;
        // What killed saves left behind, bounded; like pruning it never fails the save.
        if let Some(index) = &self.index {
            let budget = self.options.sweep_budget;
            self.store_sweep = sweep::sweep(&*self.lease, index, budget).await.ok();
        }
        Ok(revision)
    }

    /// Deletes this save's owner record once its upload is cleaned up, and passes `error`
    /// on. A failed deletion leaves the record for a later sweep.
    async fn disown(&self, id: &str, error: WorkspaceError) -> WorkspaceError {
        let _ = self.lease.delete(&[owners::record_path(id)]).await;
        error
    }

    async fn upload_archive(
        &self,
        revision: &Revision,
        entries: Vec<select::SnapshotEntry>,
        cancel: &Cancel,
    ) -> Result<()> {
        let staged = self.root.join(format!("save-{}.tar.gz", revision.id));
        let (directory, at, cancel) = (self.directory.clone(), staged.clone(), cancel.clone());
        let result = async {
            let size = blocking(move || archive::write_archive(&directory, &entries, &at, &cancel))
                .await?;
            if size > self.options.max_archive_bytes {
                return Err(WorkspaceError::range(format!(
                    "Workspace archive exceeded {} bytes",
                    self.options.max_archive_bytes
                )));
            }
            let mut options = WriteOptions::new(WriteCondition::Absent);
            options.content_type = Some(CONTENT_TYPE.into());
            options.content_length = Some(size);
            self.lease
                .write(&revision.path, WriteBody::File(staged.clone()), options)
                .await
        }
        .await;
        let _ = tokio::fs::remove_file(&staged).await;
        result.map(|_| ())
    }

    async fn remove_revision(&self, revision: &Revision) -> Result<()> {
        match revision.format {
            Format::Archive => {
                self.lease
                    .delete(std::slice::from_ref(&revision.path))
                    .await
            }
            Format::Folder => folder::remove(&*self.lease, &revision.id).await,
        }
    }

    /// Removes the temporary root and releases storage; a second call does nothing.
    pub async fn release(&mut self) -> Result<()> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        let cleanup = remove_tree(&self.root).await;
        let release = self.lease.release().await;
        match (cleanup, release) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(error), Ok(())) | (Ok(()), Err(error)) => Err(error),
            (Err(cleanup), Err(release)) => Err(WorkspaceError::aggregate(
                "Workspace materialization cleanup and storage release failed",
                vec![cleanup, release],
            )),
        }
    }
}
