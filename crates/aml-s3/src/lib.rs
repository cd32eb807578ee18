//! S3 Workspace storage for AML (`s3Workspace`, BW-3), napi-free.
//!
//! - [`client`]: the four S3 operations as a trait; [`native_client`] implements it over
//!   `object_store` for `s3Workspace({ config })`.
//! - [`lock`]: the `lock.json` lease; [`layout`] and [`segment`]: the key layout and its
//!   checks; [`storage`]: one acquisition's read/write/list/delete/release.

pub mod client;
pub mod clock;
pub mod config;
pub mod error;
pub mod layout;
pub mod lock;
pub mod native_client;
pub mod segment;
pub mod storage;

pub use client::{ByteStream, Fetched, ObjectClient, PutCondition, S3Error};
pub use clock::{Clock, LockTimings, SystemClock};
pub use config::{S3Config, S3Credentials, DEFAULT_REGION};
pub use error::{ErrorClass, StorageError};
pub use layout::{check_prefix, WorkspaceKeys, DEFAULT_PREFIX};
pub use native_client::NativeS3Client;
pub use segment::workspace_storage_segment;
pub use storage::{
    S3WorkspaceLease, S3WorkspaceStorage, StoredObject, WriteCondition, STORAGE_NAME,
};
