//! napi binding for `@aml-jsx/sdk`. Conversions only: every function forwards to the
//! napi-free engine in `crates/aml-engine` and turns its results into numbers, strings or
//! JSON. The modules are public so the exported functions count as used in test builds,
//! where the napi registration is compiled out.

pub mod acp;
pub mod boundary;
pub mod evaluation;
pub mod files;
pub mod hot_path;
pub mod journal;
pub mod process;
pub mod runs;
pub mod tools;
pub mod workspace;
