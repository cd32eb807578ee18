//! Token usage a provider reports with its answer (issue 37): validation, the counted amount
//! the `maxTokens` budget sees, and summing. One implementation: the binding's `agentUsage`,
//! the exported `normalizeUsage` and the ACP mapping all go through [`Usage::from_reported`].

use serde::Serialize;

/// The public field names, in the order [`Usage::from_reported`] takes their values.
pub const USAGE_FIELDS: [&str; 5] = [
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cachedInputTokens",
    "reasoningTokens",
];

/// `AgentResponse.usage`: only the fields the provider reported are `Some`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// One field as the provider gave it, classified by the driver (the engine never sees a JS value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reported {
    /// `undefined`: not reported.
    Absent,
    Number(f64),
    /// Anything else (a string, `null`, a bigint, an object…).
    NotANumber,
}

/// Why a reported usage was refused: the offending field (`None`: usage is not an object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadUsage(pub Option<&'static str>);

impl std::fmt::Display for BadUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("usage must be an object"),
            Some(field) => write!(f, "usage.{field} must be a non-negative safe integer"),
        }
    }
}

/// JavaScript's `Number.MAX_SAFE_INTEGER`: beyond it a count is no longer exact in a JS number.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

impl Usage {
    /// Validates the five fields (in [`USAGE_FIELDS`] order). Negative, fractional, unsafe,
    /// non-finite and non-number values are refused rather than summed.
    pub fn from_reported(values: [Reported; 5]) -> Result<Usage, BadUsage> {
        let mut out = [None; 5];
        for (index, value) in values.into_iter().enumerate() {
            out[index] = match value {
                Reported::Absent => None,
                Reported::Number(n) if (0.0..=MAX_SAFE).contains(&n) && n.fract() == 0.0 => {
                    Some(n as u64)
                }
                _ => return Err(BadUsage(Some(USAGE_FIELDS[index]))),
            };
        }
        let [input_tokens, output_tokens, total_tokens, cached_input_tokens, reasoning_tokens] =
            out;
        Ok(Usage {
            input_tokens,
            output_tokens,
            total_tokens,
            cached_input_tokens,
            reasoning_tokens,
        })
    }

    /// The fields in [`USAGE_FIELDS`] order.
    pub fn fields(&self) -> [Option<u64>; 5] {
        [
            self.input_tokens,
            self.output_tokens,
            self.total_tokens,
            self.cached_input_tokens,
            self.reasoning_tokens,
        ]
    }

    /// Nothing was reported (an empty `{}`): it adds nothing and is not shown.
    pub fn is_empty(&self) -> bool {
        self.fields().iter().all(Option::is_none)
    }

    /// What `maxTokens` counts: `totalTokens`, or input + output when no total was given
    /// (cached and reasoning tokens are parts of those, so they are never added again).
    pub fn counted(&self) -> u64 {
        match self.total_tokens {
            Some(total) => total,
            None => self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(self.output_tokens.unwrap_or(0)),
        }
    }

    /// Adds `other` field by field; a field is reported in the sum when either side reports it.
    /// A sum's `totalTokens` stays what [`Usage::counted`] would count for the parts: a part
    /// without a total contributes its input + output, so totals of mixed providers agree
    /// with the budget.
    pub fn add(&mut self, other: &Usage) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            }
        }
        let total = if self.total_tokens.is_some() || other.total_tokens.is_some() {
            Some(self.counted().saturating_add(other.counted()))
        } else {
            None
        };
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
        self.total_tokens = total;
        self.cached_input_tokens = sum(self.cached_input_tokens, other.cached_input_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
    }
}

/// ACP's `session/prompt` usage field names and the AML names they map to (the rest of ACP's
/// fields, e.g. `cachedWriteTokens`, have no AML counterpart and are left out).
const ACP_FIELDS: [(&str, &str); 5] = [
    ("inputTokens", "inputTokens"),
    ("outputTokens", "outputTokens"),
    ("totalTokens", "totalTokens"),
    ("cachedReadTokens", "cachedInputTokens"),
    ("thoughtTokens", "reasoningTokens"),
];

/// An ACP agent's prompt-response `usage` renamed to AML's fields, values as the agent sent
/// them (the engine validates them where any provider's usage is validated). `None` when the
/// reply had no usage object.
pub fn acp_usage(acp: &serde_json::Value) -> Option<serde_json::Value> {
    let acp = acp.as_object()?;
    let mut out = serde_json::Map::new();
    for (from, to) in ACP_FIELDS {
        if let Some(value) = acp.get(from).filter(|v| !v.is_null()) {
            out.insert(to.to_string(), value.clone());
        }
    }
    Some(serde_json::Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Reported::{Absent, NotANumber, Number};

    #[test]
    fn acp_usage_is_renamed_to_aml_fields() {
        let acp = serde_json::json!({
            "totalTokens": 30, "inputTokens": 20, "outputTokens": 10,
            "thoughtTokens": 4, "cachedReadTokens": 5, "cachedWriteTokens": 1
        });
        assert_eq!(
            acp_usage(&acp).unwrap(),
            serde_json::json!({
                "inputTokens": 20, "outputTokens": 10, "totalTokens": 30,
                "cachedInputTokens": 5, "reasoningTokens": 4
            })
        );
        assert_eq!(acp_usage(&serde_json::json!(3)), None);
    }

    #[test]
    fn keeps_only_reported_fields() {
        let u = Usage::from_reported([Number(3.0), Absent, Absent, Number(1.0), Absent]).unwrap();
        assert_eq!(u.input_tokens, Some(3));
        assert_eq!(u.output_tokens, None);
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"inputTokens":3,"cachedInputTokens":1}"#
        );
    }

    #[test]
    fn refuses_bad_values_naming_the_field() {
        for bad in [-1.0, 1.5, f64::NAN, f64::INFINITY, 9_007_199_254_740_992.0] {
            let e = Usage::from_reported([Absent, Number(bad), Absent, Absent, Absent]);
            assert_eq!(e, Err(BadUsage(Some("outputTokens"))), "{bad}");
        }
        let e = Usage::from_reported([Absent, Absent, Absent, Absent, NotANumber]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "usage.reasoningTokens must be a non-negative safe integer"
        );
    }

    #[test]
    fn counts_total_or_input_plus_output() {
        let with_total = Usage {
            input_tokens: Some(5),
            output_tokens: Some(5),
            total_tokens: Some(12),
            ..Usage::default()
        };
        assert_eq!(with_total.counted(), 12);
        let without = Usage {
            input_tokens: Some(5),
            output_tokens: Some(4),
            cached_input_tokens: Some(3),
            ..Usage::default()
        };
        assert_eq!(without.counted(), 9);
    }

    #[test]
    fn sums_field_by_field_and_keeps_the_total_countable() {
        let mut sum = Usage::default();
        sum.add(&Usage {
            input_tokens: Some(2),
            output_tokens: Some(3),
            ..Usage::default()
        });
        assert_eq!(sum.total_tokens, None);
        sum.add(&Usage {
            total_tokens: Some(10),
            reasoning_tokens: Some(1),
            ..Usage::default()
        });
        assert_eq!(sum.input_tokens, Some(2));
        assert_eq!(sum.total_tokens, Some(15));
        assert_eq!(sum.reasoning_tokens, Some(1));
        assert_eq!(sum.counted(), 15);
    }
}
