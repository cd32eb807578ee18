//! Tools in the binding: the dispatcher from tokio to JS executors, JSON Schema fitness,
//! and the test-only Rust-native provider.

pub mod dispatch;
pub mod json_schema;
pub mod native_scripted;
