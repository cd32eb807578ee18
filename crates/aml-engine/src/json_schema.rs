//! The JSON Schemas AML hands to a model (Tool input schemas, structured-output schemas)
//! must be usable by whoever reads them: valid against the draft 2020-12 meta-schema and
//! self-contained. The Standard Schema libraries generate them; this check decides whether
//! a generated document is fit to send.

/// Checks a JSON Schema document, given as JSON text.
///
/// Returns the first problem found, or `None` when the document is a valid draft 2020-12
/// schema that also compiles: every `$ref` resolves inside the document (nothing is ever
/// fetched) and every `pattern` is a valid regular expression. The meta-schema alone does
/// not catch those two, yet a model-side validator would fail on them.
pub fn json_schema_problem(json: &str) -> Option<String> {
    let document: serde_json::Value = match serde_json::from_str(json) {
        Ok(value) => value,
        Err(error) => return Some(format!("JSON Schema is not valid JSON: {error}")),
    };
    if let Err(error) = jsonschema::draft202012::meta::validate(&document) {
        let path = error.instance_path().to_string();
        let at = if path.is_empty() { "/" } else { path.as_str() };
        return Some(format!("{error} (at {at})"));
    }
    match jsonschema::draft202012::options().build(&document) {
        Ok(_) => None,
        Err(error) => Some(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::json_schema_problem;

    #[test]
    fn accepts_generated_object_schemas() {
        let schema = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
            "properties":{"id":{"type":"string","minLength":1}},"required":["id"],
            "additionalProperties":false}"#;
        assert_eq!(json_schema_problem(schema), None);
        assert_eq!(json_schema_problem("{}"), None);
        assert_eq!(json_schema_problem("true"), None);
    }

    #[test]
    fn accepts_local_references() {
        let schema = r##"{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},
            "$ref":"#/$defs/node"}"##;
        assert_eq!(json_schema_problem(schema), None);
    }

    #[test]
    fn rejects_meta_schema_violations_with_a_location() {
        let problem = json_schema_problem(r#"{"properties":{"a":{"type":12}}}"#).unwrap();
        assert!(problem.contains("/properties/a/type"), "{problem}");
        assert!(json_schema_problem(r#"{"required":"a"}"#).is_some());
        assert!(json_schema_problem("12").is_some());
    }

    #[test]
    fn rejects_what_only_compiling_finds() {
        assert!(json_schema_problem(r#"{"type":"string","pattern":"("}"#).is_some());
        assert!(json_schema_problem(r##"{"$ref":"#/$defs/missing"}"##).is_some());
        // Never fetched: a remote reference makes the schema unusable offline.
        assert!(json_schema_problem(r#"{"$ref":"https://example.com/schema.json"}"#).is_some());
    }

    #[test]
    fn rejects_text_that_is_not_json() {
        assert!(json_schema_problem("{")
            .unwrap()
            .starts_with("JSON Schema is not valid JSON"));
    }
}
