//! `workspaceStorageSegment(id)` (WP-2): one Workspace id as one storage path segment.
//!
//! The rule is JavaScript's `encodeURIComponent` with `!'()*` also percent-encoded
//! (upper-case hex), and the two dot segments spelled with `%2E` so no id can climb out of
//! its namespace. What is left unencoded is exactly `A-Z a-z 0-9 - _ . ~`.

use std::fmt::Write as _;

/// The `TypeError` message for an id that is not a non-empty normalized string.
pub const INVALID_ID: &str = "Workspace storage id must be a non-empty normalized string";

pub use aml_text::{is_js_whitespace, is_normalized};

/// Encodes a Workspace id as one storage segment, or `Err(INVALID_ID)`.
pub fn workspace_storage_segment(id: &str) -> Result<String, &'static str> {
    if !is_normalized(id) {
        return Err(INVALID_ID);
    }
    if id == "." || id == ".." {
        return Ok("%2E".repeat(id.len()));
    }
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_unreserved_set() {
        let id = "AZaz09-_.~review";
        assert_eq!(workspace_storage_segment(id).unwrap(), id);
    }

    #[test]
    fn encodes_what_encode_uri_component_keeps_and_the_rest() {
        assert_eq!(
            workspace_storage_segment("!'()*").unwrap(),
            "%21%27%28%29%2A"
        );
        assert_eq!(workspace_storage_segment("a/b c").unwrap(), "a%2Fb%20c");
        assert_eq!(workspace_storage_segment("a\\b%").unwrap(), "a%5Cb%25");
        // UTF-8 bytes, upper-case hex: encodeURIComponent("é") === "%C3%A9".
        assert_eq!(workspace_storage_segment("é").unwrap(), "%C3%A9");
        assert_eq!(workspace_storage_segment("😀").unwrap(), "%F0%9F%98%80");
    }

    #[test]
    fn dot_segments_cannot_climb() {
        assert_eq!(workspace_storage_segment(".").unwrap(), "%2E");
        assert_eq!(workspace_storage_segment("..").unwrap(), "%2E%2E");
        assert_eq!(workspace_storage_segment("...").unwrap(), "...");
        assert_eq!(workspace_storage_segment("../x").unwrap(), "..%2Fx");
    }

    #[test]
    fn rejects_ids_that_are_not_normalized() {
        for id in ["", " a", "a ", "\ta", "a\n", "\u{FEFF}a", "a\u{3000}"] {
            assert_eq!(workspace_storage_segment(id), Err(INVALID_ID), "{id:?}");
        }
        // U+0085 is not JavaScript white space, so trim() keeps it.
        assert_eq!(workspace_storage_segment("a\u{85}").unwrap(), "a%C2%85");
    }
}
