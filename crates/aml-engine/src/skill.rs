//! `<Skill>` in the engine (INVENTORY SK-1 and its docs-next semantics): placement and the
//! registration of a staged package with its Agent. Reading files, staging packages and
//! composing text are the facade's (they are I/O); the engine owns where a Skill may stand,
//! so the rule is the same for every driver.
//!
//! A Skill is a capture scope: its children are its private inline content (post-order, so
//! they may contain Agents), and `skill_done` puts the resulting text in the channel around
//! it — the Agent prompt, or that Agent's `<System>` / `<FollowUp>` text.

use crate::agent::Target;
use crate::capture::SkillGrant;
use crate::error::EvalError;
use crate::frame::Frame;
use crate::scope::ScopeEntry;
use crate::shared::Shared;
use crate::step::Step;
use crate::task::Task;
use crate::trace::{Attributes, SpanKind};

impl Task {
    /// Enters the `<Skill>` on top. Valid where its text reaches an Agent plan: directly in
    /// the Agent (also through lexical wrappers such as `<Sandbox>`), or in that Agent's
    /// `<System>` or `<FollowUp>`. At the root, or inside another scope's private input
    /// (a Skill's own children, a Script's source, a File's content), it is rejected.
    pub(crate) fn enter_skill(
        &mut self,
        name: String,
        attributes: Attributes,
        sensitive: Attributes,
        sh: &mut Shared,
    ) -> Step {
        match self.target() {
            Target::Agent { .. } | Target::System | Target::FollowUp => {}
            Target::None | Target::Text => {
                return self.reject(EvalError::OnlyInsideAgent("Skill"), sh)
            }
        }
        let entry = ScopeEntry {
            kind: SpanKind::Skill,
            name,
            resource: false,
            attributes,
            sensitive,
            capture: true,
        };
        self.enter_scope(entry, sh)
    }

    /// The facade completed the Skill on top: register its package (if any) with the nearest
    /// Agent plan, then close the span and append `output` to the surrounding channel.
    pub(crate) fn skill_done(
        &mut self,
        output: &str,
        package: Option<SkillGrant>,
        attributes: Attributes,
        sensitive: Attributes,
        sh: &mut Shared,
    ) -> Step {
        if let Some(grant) = package {
            if !matches!(self.frames.last(), Some(Frame::Scope { .. })) {
                return self.reject(
                    EvalError::Invariant("AML scope completed out of lifecycle order"),
                    sh,
                );
            }
            // The Skill's own scope is a capture too, but never an Agent: the search
            // skips it and finds the plan that enter_skill checked.
            let Some(plan) = self.nearest_plan() else {
                return self.reject(
                    EvalError::Invariant("AML Skill completed outside an Agent plan"),
                    sh,
                );
            };
            if plan.skills().iter().any(|s| s.name == grant.name) {
                return self.reject(EvalError::DuplicateSkill(grant.name), sh);
            }
            plan.grants_mut().skills.push(grant);
        }
        self.scope_done(output, attributes, sensitive, sh)
    }
}
