//! napi binding for `@aml-jsx/sdk`. Conversions only: every function forwards to the
//! napi-free engine in `crates/aml-engine` and turns its results into numbers, strings or
//! JSON. The modules are public so the exported functions count as used in test builds,
//! where the napi registration is compiled out.

pub mod acp;
pub mod acp_bridge;
pub mod acp_external;
pub mod acp_loop_bridge;
pub mod acp_relay;
pub mod agent;
mod bridge_runtime;
pub mod cancellation;
pub mod evaluation;
mod guard;
// The evaluator's per-value and per-Agent step calls, as plain Node-API callbacks.
mod exact_text;
pub mod hot_path;
// The plain Tool call's span (issue 8 §4).
mod hot_tool_span;
pub mod json_schema;
pub mod loop_state;
pub mod native_scripted;
mod panic_report;
pub mod process;
pub mod process_exec;
mod process_pipe;
mod process_runtime;
mod raw_call;
mod registry;
pub mod s3_storage;
pub mod scope;
pub mod skill;
pub mod skill_files;
pub mod spans;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
pub mod tool_dispatch;
// Workspace, <File> and <Include> (docs/WORKSPACE.md).
pub mod fs;
pub mod workspace_scope;
// Workspace persistence (crates/aml-workspace): sessions, stores, JS storage adapters.
pub mod workspace;
pub mod workspace_js_storage;
// The evaluation journal (docs/JOURNAL.md): file, positions, native index and replay.
pub mod journal;
pub mod journal_hot;
pub mod journal_index;
// Docker Sandbox (crates/aml-docker, docs/DOCKER-SANDBOX.md).
pub mod docker;
pub mod docker_spawn;
// Remote Sandbox Workspace transfer (Daytona, Modal; aml_workspace::transfer).
pub mod sandbox_transfer;
