//! S3 Workspace storage for AML (`s3Workspace`, BW-3), napi-free.
//!
//! - [`client`]: the four S3 operations as a trait (the storage port); [`native_client`]
//!   implements it over `object_store` for `s3Workspace({ config })`, and the binding
//!   implements it over an application-supplied AWS SDK v3 `S3Client` for
//!   `s3Workspace({ client })` (`src/workspace/s3_port.rs`): one lock, one layout for both.
//! - [`lock`]: the `lock.json` lease; [`layout`]: the key layout and its checks (the segment
//!   rule is `aml_workspace::paths::workspace_storage_segment`, the only one); [`storage`]:
//!   one acquisition's read/write/list/delete/release; [`lease_time`]: how long a lease lasts
//!   (the reference's 5/20 minutes, or `lockLeaseMs`) and how long a recorded lock counts.

pub mod client;
pub mod clock;
pub mod config;
pub mod error;
pub mod layout;
pub mod lease_time;
pub mod lock;
pub mod native_client;
pub mod storage;

pub use aml_workspace::paths::workspace_storage_segment;
pub use client::{ByteStream, Fetched, ObjectClient, PutCondition, S3Error};
pub use clock::{Clock, OffsetClock, SystemClock};
pub use config::{S3Config, S3Credentials, DEFAULT_REGION};
pub use error::{ErrorClass, StorageError};
pub use layout::{check_prefix, WorkspaceKeys, DEFAULT_PREFIX};
pub use lease_time::LockTimings;
pub use native_client::NativeS3Client;
pub use storage::{
    S3WorkspaceLease, S3WorkspaceStorage, StoredObject, WriteCondition, STORAGE_NAME,
};
