//! `session/set_config_option` requests from a launch's `configuration` entries, checked
//! against the options the agent advertised (INVENTORY BA-0, ACP `SessionConfigOption`).
//! The advertised list is replaced by each reply's `configOptions`, so a later entry sees
//! the effect of an earlier one (a model choice can change the thought levels).

use serde_json::{json, Value};

use crate::error::{AcpError, ErrorKind};

/// Which option an entry targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigTarget {
    Category(String),
    Id(String),
}

/// One `configuration` entry of a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigEntry {
    pub target: ConfigTarget,
    /// A boolean or a value id (string).
    pub value: Value,
}

fn capability(message: String) -> AcpError {
    AcpError::new(ErrorKind::Capability, message)
}

/// The `session/set_config_option` params for `entry` against the advertised `options`.
pub fn request_params(
    session_id: &str,
    options: &[Value],
    entry: &ConfigEntry,
) -> Result<Value, AcpError> {
    let found = options.iter().find(|option| match &entry.target {
        ConfigTarget::Category(category) => {
            option.get("category").and_then(Value::as_str) == Some(category)
        }
        ConfigTarget::Id(id) => option.get("id").and_then(Value::as_str) == Some(id),
    });
    let Some(option) = found else {
        return Err(capability(match &entry.target {
            ConfigTarget::Category(c) => format!(
                "ACP Agent does not advertise requested session configuration category \"{c}\""
            ),
            ConfigTarget::Id(i) => {
                format!("ACP Agent does not advertise requested session configuration id \"{i}\"")
            }
        }));
    };
    let id = option.get("id").and_then(Value::as_str).unwrap_or_default();
    if option.get("type").and_then(Value::as_str) == Some("boolean") {
        let Some(value) = entry.value.as_bool() else {
            return Err(capability(format!(
                "ACP session configuration \"{id}\" requires a boolean value"
            )));
        };
        return Ok(
            json!({ "sessionId": session_id, "configId": id, "type": "boolean", "value": value }),
        );
    }
    let Some(value) = entry.value.as_str() else {
        return Err(capability(format!(
            "ACP session configuration \"{id}\" requires a selected value id"
        )));
    };
    if !advertises(option.get("options"), value) {
        return Err(capability(format!(
            "ACP session configuration \"{id}\" does not advertise value \"{value}\""
        )));
    }
    Ok(json!({ "sessionId": session_id, "configId": id, "value": value }))
}

/// Whether a select's options (flat, or grouped under headers) contain `value`.
fn advertises(options: Option<&Value>, value: &str) -> bool {
    let Some(options) = options.and_then(Value::as_array) else {
        return false;
    };
    options.iter().any(|option| {
        if let Some(group) = option.get("options").and_then(Value::as_array) {
            return group
                .iter()
                .any(|inner| inner.get("value").and_then(Value::as_str) == Some(value));
        }
        option.get("value").and_then(Value::as_str) == Some(value)
    })
}

/// The `configOptions` of a `session/new` or `session/set_config_option` reply.
pub fn advertised(reply: &Value) -> Vec<Value> {
    reply
        .get("configOptions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<Value> {
        advertised(&json!({ "configOptions": [
            { "id": "model", "name": "Model", "category": "model", "type": "select",
              "currentValue": "a", "options": [{ "value": "a", "name": "A" }, { "value": "b", "name": "B" }] },
            { "id": "effort", "name": "Effort", "category": "thought_level", "type": "select",
              "currentValue": "low", "options": [{ "group": "g", "name": "G", "options": [{ "value": "high", "name": "H" }] }] },
            { "id": "yolo", "name": "Yolo", "type": "boolean", "currentValue": false }
        ]}))
    }

    fn entry(target: ConfigTarget, value: Value) -> ConfigEntry {
        ConfigEntry { target, value }
    }

    fn message(target: ConfigTarget, value: Value) -> String {
        request_params("s", &options(), &entry(target, value))
            .unwrap_err()
            .message
    }

    #[test]
    fn builds_requests() {
        let select = request_params(
            "s",
            &options(),
            &entry(ConfigTarget::Category("model".into()), json!("b")),
        );
        assert_eq!(
            select.unwrap(),
            json!({ "sessionId": "s", "configId": "model", "value": "b" })
        );
        let grouped = request_params(
            "s",
            &options(),
            &entry(ConfigTarget::Id("effort".into()), json!("high")),
        );
        assert_eq!(grouped.unwrap()["value"], "high");
        let boolean = request_params(
            "s",
            &options(),
            &entry(ConfigTarget::Id("yolo".into()), json!(true)),
        );
        assert_eq!(
            boolean.unwrap(),
            json!({ "sessionId": "s", "configId": "yolo", "type": "boolean", "value": true })
        );
    }

    #[test]
    fn exact_errors() {
        use ConfigTarget::*;
        assert_eq!(
            message(Category("mode".into()), json!("x")),
            "ACP Agent does not advertise requested session configuration category \"mode\""
        );
        assert_eq!(
            message(Id("nope".into()), json!("x")),
            "ACP Agent does not advertise requested session configuration id \"nope\""
        );
        assert_eq!(
            message(Id("yolo".into()), json!("x")),
            "ACP session configuration \"yolo\" requires a boolean value"
        );
        assert_eq!(
            message(Id("model".into()), json!(true)),
            "ACP session configuration \"model\" requires a selected value id"
        );
        assert_eq!(
            message(Id("model".into()), json!("c")),
            "ACP session configuration \"model\" does not advertise value \"c\""
        );
    }
}
