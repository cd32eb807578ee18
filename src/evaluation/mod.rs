//! One evaluation in the binding: domains, Agent capture and grants, scope frames, spans,
//! Loop renders, Skill and Workspace placement, and cancellation tokens.

pub mod agent;
pub mod cancellation;
pub mod domain;
pub mod loop_state;
pub mod scope;
pub mod skill;
pub mod spans;
pub mod usage;
pub mod workspace_scope;
