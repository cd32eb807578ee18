//! A test driver for the sans-IO engine: a tiny value model and a loop that drives a
//! [`Domain`](aml_engine::Domain) with a mirror stack, the way the JS facade does. Shared by the
//! test binaries.
//!
//! Besides components, the model has the capture primitives (`<Agent>`, `<System>`,
//! `<FollowUp>`) and the grants (`<Tool>`, `<Mcp>`): the driver answers `Op::Primitive` with the matching `enter_*`
//! call, `Op::Children` with the node's children and `Op::Agent` by taking a scheduler slot,
//! recording the ready plan, calling the run's (or the Agent's own) provider and handing the
//! text back with `agent_done`. A primitive node without a capture definition (for example a
//! `<Sandbox>`) is a lexical wrapper whose body value is its content.
//!
//! - [`values`]: the value model (`V`, nodes, arrays, capture primitives) and its constructors.
//! - [`driver`]: `Run`, the mirror-stack driver, resumable `Driver`s and the component `Ctx`.
//! - [`trace`]: compact views of drained trace records.
//! - [`helpers`]: small shorthands shared by several test binaries.
#![allow(dead_code)]

mod driver;
mod helpers;
mod trace;
mod values;

// Each test binary uses its own subset of these; an unused glob is not a mistake here.
#[allow(unused_imports)]
pub use driver::*;
#[allow(unused_imports)]
pub use helpers::*;
#[allow(unused_imports)]
pub use trace::*;
#[allow(unused_imports)]
pub use values::*;
