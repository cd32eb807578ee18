//! `<Loop>` in the binding: marking an iteration's render task and reserving committed
//! state transitions (the engine owns the budget, its message and `loop.transition`).

use aml_engine::EvalError;
use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;

/// Marks the fresh task `task` as a Loop render task; `tool` is the facade's reference of
/// the iteration's `aml_set_state` Tool in its per-domain table.
#[napi]
pub fn set_loop_render(domain: u32, task: u32, tool: u32) -> Result<()> {
    guard(|| {
        registry::with(domain, |d| {
            d.set_loop_render(task, tool).map_err(engine_error)
        })
    })
}

/// After `Op::Park`: sets the Agent a render task selected aside (its node stays in the
/// facade) while the rest of the render value is checked.
#[napi]
pub fn loop_park(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.loop_park(task).map(|s| s.encode()).map_err(engine_error)
        })
    })
}

/// After `Op::Resume`: puts the parked Agent back on top of `task`.
#[napi]
pub fn loop_resume(domain: u32, task: u32) -> Result<u32> {
    guard(|| {
        registry::with(domain, |d| {
            d.loop_resume(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// Reserves a transition for the Loop scope on top of `task`. Returns `null` on success and
/// the `maxStateTransitions` message when the budget is spent (the facade throws it as an
/// `EvaluationError`); protocol errors are thrown.
#[napi]
pub fn loop_transition(
    domain: u32,
    task: u32,
    name: String,
    iteration: u32,
) -> Result<Option<String>> {
    guard(|| {
        registry::with(domain, |d| {
            match d.loop_transition(task, &name, u64::from(iteration)) {
                Ok(_) => Ok(None),
                Err(error @ EvalError::MaxStateTransitions(..)) => Ok(Some(error.to_string())),
                Err(error) => Err(engine_error(error)),
            }
        })
    })
}
