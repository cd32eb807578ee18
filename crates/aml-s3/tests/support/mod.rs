//! Shared helpers of the integration tests that need no real S3 server.
pub mod bucket;
pub mod engine;
