//! `<Skill>` in the binding: entering it (the engine checks placement), completing it with
//! an optional package registration, and reading the packages of the ready Agent on top.

use aml_engine::SkillGrant;
use napi::Result;
use napi_derive::napi;

use crate::boundary::guard::{engine_error, guard};
use crate::boundary::registry;
use crate::evaluation::spans::attrs;

/// Enters the `<Skill>` on top of `task` as a capture scope with a `skill` span named `name`;
/// attributes are JSON objects of scalars.
#[napi]
pub fn enter_skill(
    domain: u32,
    task: u32,
    name: String,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<u32> {
    guard(|| {
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        registry::with(domain, |d| {
            d.enter_skill(task, name, attributes, sensitive)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// Completes the `<Skill>` on top. A package Skill passes its SKILL.md `name` and the
/// facade's `reference` for the staged package; inline and file Skills pass neither.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn skill_done(
    domain: u32,
    task: u32,
    output: String,
    package_name: Option<String>,
    reference: Option<u32>,
    attributes: Option<String>,
    sensitive: Option<String>,
) -> Result<u32> {
    guard(|| {
        let (attributes, sensitive) = (attrs(attributes)?, attrs(sensitive)?);
        let package = match (package_name, reference) {
            (Some(name), Some(reference)) => Some(SkillGrant { name, reference }),
            _ => None,
        };
        registry::with(domain, |d| {
            d.skill_done(task, &output, package, attributes, sensitive)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    })
}

/// Skill package references registered with the ready Agent on top, in completion order.
#[napi]
pub fn agent_skills(domain: u32, task: u32) -> Result<Vec<u32>> {
    guard(|| {
        registry::with(domain, |d| {
            let plan = d.agent_plan(task).map_err(engine_error)?;
            Ok(plan.skills().iter().map(|s| s.reference).collect())
        })
    })
}
