//! Workspace persistence in the binding: materialization sessions and stores, storage
//! adapters written in JS, the native S3 store, and remote Sandbox transfer.

pub mod fs_store;
pub mod js_storage;
pub mod local_lock;
pub mod outcome;
pub mod persistence;
pub mod s3;
pub mod s3_port;
pub mod transfer;
