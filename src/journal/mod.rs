//! The evaluation journal in the binding: structural positions and native entry indexes.

pub mod index;
pub mod plan_digest;
pub mod positions;
pub mod restate;
