//! Workspace revision persistence for AML (WP-1, WP-2, BW-1, BW-2), napi-free.
//!
//! - [`storage`]: the storage port every revision store implements ([`StorageAdapter`],
//!   [`StorageLease`]); the filesystem store ([`fs_storage`]) here, S3 in `aml-s3`, JS
//!   adapters in the binding.
//! - [`persistence`]: the lifecycle over a lease: materialize, save, release.
//! - [`select`], [`archive`], [`folder`], [`index`]: selection, the two revision formats and
//!   `workspace.json`.
//! - [`lock`]: the `proper-lockfile`-compatible directory lock (local and filesystem stores);
//!   [`holder`]: who holds a lock, so a crashed holder's lock is taken over at once.
//! - [`sweep`], [`owners`], [`materializations`]: what killed saves leave behind (unpublished
//!   revisions, scratch files, materialization directories) is removed by a later save or
//!   acquisition once its owner is provably gone.

pub mod archive;
mod blocking;
pub mod cancel;
mod confine;
pub mod error;
pub mod folder;
mod fs_bulk;
mod fs_scratch;
pub mod fs_storage;
mod full_disk;
pub mod holder;
pub mod index;
pub mod lock;
mod lock_aside;
mod lock_record;
pub mod materializations;
pub mod owners;
pub mod paths;
pub mod persistence;
mod placement;
mod requests;
pub mod select;
pub mod storage;
pub mod sweep;
pub mod transfer;

pub use cancel::{Cancel, Phase};
pub use error::{ErrorClass, Result, WorkspaceError};
pub use fs_storage::{FilesystemLease, FilesystemStorage};
pub use holder::{Holder, Liveness};
pub use index::{Format, Revision, WorkspaceIndex};
pub use lock::{Clock, DirLock, LockFailure, LockPolicy, ReleaseFailure, SystemClock};
pub use persistence::{LoadRequest, Materialization, PersistenceOptions, SaveRequest};
pub use storage::{
    AcquireRequest, Limited, LocalFile, ObjectFile, ReadBody, StorageAdapter, StorageLease,
    StorageObject, Version, WriteBody, WriteCondition, WriteOptions,
};
pub use sweep::SweepReport;
