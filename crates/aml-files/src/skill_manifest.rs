//! The SKILL.md frontmatter of a `<Skill>` package: a YAML mapping between a first `---`
//! line and the next `---` or `...` line. AML reads two fields, `name` and `description`;
//! every other key (license, metadata, allowed-tools…) is left to the Agent's native
//! discovery, which reads the staged copy. Problems are the texts of
//! `<Skill> package "<abs>" has an invalid SKILL.md: <problem>` (docs/SKILL.md).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_norway::Value;

use crate::js_text::{collapse_spaces, js_length, js_trim_end};

const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;

/// The two fields AML reads; the description has its whitespace runs collapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillManifest {
    pub name: String,
    pub description: String,
}

/// Parses SKILL.md `text` (a leading byte order mark is ignored).
pub fn parse_skill_manifest(text: &str) -> Result<SkillManifest, String> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if js_trim_end(lines[0]) != "---" {
        return Err("it must start with YAML frontmatter (---)".into());
    }
    let close = lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, line)| matches!(js_trim_end(line), "---" | "..."))
        .map(|(i, _)| i)
        .ok_or_else(|| "its YAML frontmatter is not closed (---)".to_string())?;
    let body = &lines[1..close];
    let fields = top_level(body)?;
    let name = match fields.iter().find(|(key, _)| key == "name").map(|(_, v)| v) {
        Some(Some(name)) if valid_name(name) => name.clone(),
        _ => {
            return Err(format!(
                "name must be 1-{MAX_NAME} lowercase letters, digits and single hyphens"
            ))
        }
    };
    let description = fields
        .iter()
        .find(|(key, _)| key == "description")
        .and_then(|(_, v)| v.as_deref())
        .map(collapse_spaces)
        .unwrap_or_default();
    if description.is_empty() {
        return Err("description must be non-empty text".into());
    }
    if js_length(&description) > MAX_DESCRIPTION {
        return Err(format!(
            "description must be at most {MAX_DESCRIPTION} characters"
        ));
    }
    Ok(SkillManifest { name, description })
}

/// Agent Skills naming: the name is also the staged directory name, so it must be a safe,
/// portable path segment (`^[a-z0-9]+(?:-[a-z0-9]+)*$`, at most 64 characters).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The top-level entries of the frontmatter in order, with their text value (scalars;
/// `None` for maps, lists and null), or a problem.
fn top_level(body: &[&str]) -> Result<Vec<(String, Option<String>)>, String> {
    let source = body.join("\n");
    let deserializer = serde_norway::Deserializer::from_str(&source);
    match deserializer.deserialize_any(Entries) {
        Ok(Document::Map(entries)) => {
            let mut seen: Vec<(String, Option<String>)> = Vec::with_capacity(entries.len());
            for (key, value) in entries {
                if seen.iter().any(|(k, _)| *k == key) {
                    return Err(format!("frontmatter field \"{key}\" appears twice"));
                }
                seen.push((key, value));
            }
            Ok(seen)
        }
        Ok(Document::Empty) => Ok(Vec::new()),
        Ok(Document::Other) => Err(not_an_entry(body, first_content_line(body))),
        Err(error) => {
            let line = error.location().map_or(1, |l| l.line()).max(1);
            Err(locate(body, line))
        }
    }
}

/// The problem for a YAML error on body line `line` (1-based): the entry it belongs to, or
/// the line itself when it is not inside any `key:` entry.
fn locate(body: &[&str], line: usize) -> String {
    let index = line.min(body.len()).saturating_sub(1);
    for i in (0..=index).rev() {
        let text = body.get(i).copied().unwrap_or("");
        if text.trim().is_empty() || text.starts_with([' ', '\t', '#']) {
            continue;
        }
        return match entry_key(text) {
            Some(key) => format!("frontmatter field \"{key}\" is not a valid YAML string"),
            None => not_an_entry(body, i),
        };
    }
    not_an_entry(body, index)
}

/// `key:` at the start of a top-level line, as SKILL.md keys are written.
fn entry_key(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = line[..colon].trim_end();
    let rest = &line[colon + 1..];
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (plain && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(key)
}

fn first_content_line(body: &[&str]) -> usize {
    body.iter()
        .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or(0)
}

/// Body index `i` is file line `i + 2` (the opening `---` is line 1).
fn not_an_entry(_body: &[&str], index: usize) -> String {
    format!("line {} is not a \"key: value\" entry", index + 2)
}

enum Document {
    Map(Vec<(String, Option<String>)>),
    Empty,
    Other,
}

/// Visits the document's top level: a mapping keeps its entries in order (duplicates
/// included, so they can be named), anything else is only classified.
struct Entries;

impl<'de> Visitor<'de> for Entries {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<Value, Value>()? {
            entries.push((scalar_text(&key).unwrap_or_default(), scalar_text(&value)));
        }
        Ok(Document::Map(entries))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Document, E> {
        Ok(Document::Empty)
    }

    fn visit_none<E: de::Error>(self) -> Result<Document, E> {
        Ok(Document::Empty)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Document, E> {
        Ok(Document::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Document, E> {
        Ok(Document::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Document, E> {
        Ok(Document::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Document, E> {
        Ok(Document::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Document, E> {
        Ok(Document::Other)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Document, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(Document::Other)
    }
}

/// A scalar's text: strings as they are, numbers and booleans as written in plain YAML
/// (`name: 123` is the name "123"); `None` for null, lists and maps.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(tagged) => scalar_text(&tagged.value),
        Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(String, String), String> {
        parse_skill_manifest(text).map(|m| (m.name, m.description))
    }

    #[test]
    fn reads_plain_quoted_folded_and_literal_scalars() {
        let ok = |n: &str, d: &str| Ok((n.to_string(), d.to_string()));
        assert_eq!(
            parse(
                "---\nname: review\ndescription: Review a change\n  for correctness.\n---\n# Body"
            ),
            ok("review", "Review a change for correctness.")
        );
        assert_eq!(
            parse("---\nname: 'forms'\nlicense: MIT\nmetadata:\n  a: b\ndescription: >-\n  Folded\n  text\n---\nbody"),
            ok("forms", "Folded text")
        );
        assert_eq!(
            parse("\u{FEFF}---\r\nname: \"quoted\" # comment\r\ndescription: |\r\n  Line \\\"one\\\"\r\n  two\r\n...\r\n"),
            ok("quoted", "Line \\\"one\\\" two")
        );
        assert_eq!(
            parse("---\nname: a-1\ndescription: \"x\\ty\"\n---"),
            ok("a-1", "x y")
        );
        assert_eq!(
            parse("---\nname: 123\ndescription: true\n---"),
            ok("123", "true")
        );
    }

    #[test]
    fn reports_each_problem() {
        let err = |s: &str| Err::<(String, String), String>(s.to_string());
        assert_eq!(
            parse("# Title"),
            err("it must start with YAML frontmatter (---)")
        );
        assert_eq!(
            parse("---\nname: a\n"),
            err("its YAML frontmatter is not closed (---)")
        );
        let bad_name = err("name must be 1-64 lowercase letters, digits and single hyphens");
        for name in ["Bad Name", "a--b", "-a", "a-", "", "x".repeat(65).as_str()] {
            assert_eq!(
                parse(&format!("---\nname: {name}\ndescription: d\n---\n")),
                bad_name,
                "{name}"
            );
        }
        assert_eq!(
            parse("---\nname:\n  nested: map\ndescription: d\n---"),
            bad_name
        );
        assert_eq!(
            parse("---\nname: a\n---\n"),
            err("description must be non-empty text")
        );
        assert_eq!(
            parse("---\nname: a\ndescription:\n---\n"),
            err("description must be non-empty text")
        );
        assert_eq!(
            parse(&format!(
                "---\nname: a\ndescription: {}\n---\n",
                "x".repeat(1025)
            )),
            err("description must be at most 1024 characters")
        );
        assert!(parse(&format!(
            "---\nname: a\ndescription: {}\n---\n",
            "x".repeat(1024)
        ))
        .is_ok());
        assert_eq!(
            parse("---\nname: a\nname: b\n---\n"),
            err("frontmatter field \"name\" appears twice")
        );
        assert_eq!(
            parse("---\nname: a\ndescription: \"open\n---\n"),
            err("frontmatter field \"description\" is not a valid YAML string")
        );
        assert_eq!(
            parse("---\njust text\n---\n"),
            err("line 2 is not a \"key: value\" entry")
        );
        assert_eq!(
            parse("---\n- a\n- b\n---\n"),
            err("line 2 is not a \"key: value\" entry")
        );
        assert_eq!(parse("---\n---\n"), bad_name);
    }
}
