//! AML Studio in the binding (docs/STUDIO.md): the run store (`crates/aml-runs`), the journal
//! cut and copy (`crates/aml-journal`) and the studio server (`crates/aml-studio`).
//! Conversions only.

pub mod recorder;
pub mod store;
pub mod studio;
