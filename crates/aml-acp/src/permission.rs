//! `session/request_permission` answered by policy (INVENTORY BA-0): the option whose kind
//! equals the policy, falling back `allow_always → allow_once` and
//! `reject_always → reject_once`; otherwise (or once the turn is being cancelled) the request
//! is cancelled.

use serde::Deserialize;
use serde_json::{json, Value};

/// ACP `PermissionOptionKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionPolicy {
    AllowOnce,
    AllowAlways,
    #[default]
    RejectOnce,
    RejectAlways,
}

impl PermissionPolicy {
    pub fn parse(kind: &str) -> Option<Self> {
        Some(match kind {
            "allow_once" => PermissionPolicy::AllowOnce,
            "allow_always" => PermissionPolicy::AllowAlways,
            "reject_once" => PermissionPolicy::RejectOnce,
            "reject_always" => PermissionPolicy::RejectAlways,
            _ => return None,
        })
    }

    fn kinds(self) -> &'static [&'static str] {
        match self {
            PermissionPolicy::AllowOnce => &["allow_once"],
            PermissionPolicy::AllowAlways => &["allow_always", "allow_once"],
            PermissionPolicy::RejectOnce => &["reject_once"],
            PermissionPolicy::RejectAlways => &["reject_always", "reject_once"],
        }
    }
}

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    options: Vec<Value>,
}

/// The `result` for a permission request's raw `params`.
pub fn answer(policy: PermissionPolicy, params: Option<&str>, cancelling: bool) -> Value {
    let cancelled = json!({ "outcome": { "outcome": "cancelled" } });
    if cancelling {
        return cancelled;
    }
    let Some(request) = params.and_then(|p| serde_json::from_str::<Request>(p).ok()) else {
        return cancelled;
    };
    for kind in policy.kinds() {
        let chosen = request.options.iter().find_map(|option| {
            let id = option.get("optionId")?.as_str()?;
            (option.get("kind")?.as_str()? == *kind).then_some(id)
        });
        if let Some(id) = chosen {
            return json!({ "outcome": { "outcome": "selected", "optionId": id } });
        }
    }
    cancelled
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: &str = r#"{"sessionId":"s","toolCall":{},"options":[
        {"optionId":"a1","name":"Allow","kind":"allow_once"},
        {"optionId":"r1","name":"Reject","kind":"reject_once"},
        {"optionId":"rA","name":"Never","kind":"reject_always"}]}"#;

    fn selected(policy: &str, params: &str) -> Value {
        answer(
            PermissionPolicy::parse(policy).unwrap(),
            Some(params),
            false,
        )["outcome"]
            .clone()
    }

    #[test]
    fn picks_by_kind_with_fallbacks() {
        assert_eq!(selected("allow_once", OPTIONS)["optionId"], "a1");
        assert_eq!(selected("allow_always", OPTIONS)["optionId"], "a1");
        assert_eq!(selected("reject_once", OPTIONS)["optionId"], "r1");
        assert_eq!(selected("reject_always", OPTIONS)["optionId"], "rA");
        let only_always = r#"{"options":[{"optionId":"x","kind":"allow_always"}]}"#;
        assert_eq!(selected("allow_once", only_always)["outcome"], "cancelled");
        assert_eq!(selected("reject_once", "not json")["outcome"], "cancelled");
        assert_eq!(
            selected("reject_once", r#"{"options":5}"#)["outcome"],
            "cancelled"
        );
        let cancelling = answer(PermissionPolicy::AllowOnce, Some(OPTIONS), true);
        assert_eq!(cancelling["outcome"]["outcome"], "cancelled");
        assert_eq!(PermissionPolicy::default(), PermissionPolicy::RejectOnce);
        assert_eq!(PermissionPolicy::parse("allow"), None);
    }
}
