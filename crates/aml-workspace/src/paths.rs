//! Path rules: the storage segment of an identity, storage object paths, and the relative
//! paths of a snapshot or a restored revision.

/// The `TypeError` text of `workspaceStorageSegment(id)` for an id that is not a non-empty
/// normalized string (JavaScript's `trim()`).
pub const INVALID_STORAGE_ID: &str = "Workspace storage id must be a non-empty normalized string";

/// WP-2 `workspaceStorageSegment(id)`, the one implementation of the rule (the JS export, the
/// filesystem store and the S3 key layout all call it): the id must be a non-empty normalized
/// string, else `Err(INVALID_STORAGE_ID)`; see [`storage_segment`] for the encoding.
pub fn workspace_storage_segment(id: &str) -> Result<String, &'static str> {
    if !aml_text::is_normalized(id) {
        return Err(INVALID_STORAGE_ID);
    }
    Ok(storage_segment(id))
}

/// The encoding of a checked id: JavaScript's `encodeURIComponent`, plus `!'()*` in upper-case
/// hex, with `.` and `..` encoded so the segment can never mean "here" or "up". What is left
/// unencoded is exactly `A-Z a-z 0-9 - _ . ~`.
pub fn storage_segment(id: &str) -> String {
    match id {
        "." => return "%2E".into(),
        ".." => return "%2E%2E".into(),
        _ => {}
    }
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Longest storage segment (bytes) the filesystem store accepts. Why 200: the longest file
/// name it builds from a segment is the lock's holder claim, `<segment>.lock.holder.claim-`
/// and a 36-byte UUID (55 bytes more), and a file name is at most [`MAX_NAME_BYTES`]. A longer
/// id is refused up front instead of failing later with `ENAMETOOLONG`.
pub const MAX_SEGMENT_BYTES: usize = 200;

/// Whether `id` is a non-empty normalized string (no surrounding white space) without NUL.
/// White space is JavaScript's (`aml_text`), not Rust's `trim`: the two disagree on U+0085
/// and U+FEFF, and an id must pass or fail alike on both sides of the binding.
pub fn is_normalized(value: &str) -> bool {
    aml_text::is_normalized(value) && !value.contains('\0')
}

/// A storage object path: relative, `/`-separated, no empty, `.` or `..` segment, no
/// backslash or NUL.
pub fn is_storage_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// A list prefix: empty, or a storage path optionally ending in `/`.
pub fn is_storage_prefix(prefix: &str) -> bool {
    prefix.is_empty() || is_storage_path(prefix.strip_suffix('/').unwrap_or(prefix))
}

/// Longest path (bytes) and path component a revision may hold: Linux's `PATH_MAX` and
/// `NAME_MAX`, so every entry this package saved can be restored.
pub const MAX_PATH_BYTES: usize = 4095;
pub const MAX_NAME_BYTES: usize = 255;

/// A relative entry path inside a materialization: what a snapshot records and what a restore
/// accepts. Same rules as storage paths, plus the length bounds.
pub fn is_entry_path(path: &str) -> bool {
    is_storage_path(path)
        && path.len() <= MAX_PATH_BYTES
        && path
            .split('/')
            .all(|segment| segment.len() <= MAX_NAME_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_match_encode_uri_component_plus_the_reserved_marks() {
        assert_eq!(storage_segment("review-42"), "review-42");
        assert_eq!(storage_segment("a/b c"), "a%2Fb%20c");
        assert_eq!(storage_segment("!'()*~._-"), "%21%27%28%29%2A~._-");
        assert_eq!(storage_segment("."), "%2E");
        assert_eq!(storage_segment(".."), "%2E%2E");
        assert_eq!(storage_segment("..."), "...");
        assert_eq!(storage_segment("é"), "%C3%A9");
        assert_eq!(storage_segment("😀"), "%F0%9F%98%80");
        assert_eq!(storage_segment("a\\b%"), "a%5Cb%25");
        assert_eq!(storage_segment("../x"), "..%2Fx");
    }

    #[test]
    fn segment_ids_must_be_normalized_the_javascript_way() {
        for id in ["", " a", "a ", "\ta", "a\n", "\u{FEFF}a", "a\u{3000}"] {
            assert_eq!(
                workspace_storage_segment(id),
                Err(INVALID_STORAGE_ID),
                "{id:?}"
            );
        }
        // U+0085 is not JavaScript white space, so trim() keeps it; NUL is a plain byte.
        assert_eq!(workspace_storage_segment("a\u{85}").unwrap(), "a%C2%85");
        assert_eq!(workspace_storage_segment("a\0").unwrap(), "a%00");
        assert_eq!(
            workspace_storage_segment("review 42").unwrap(),
            "review%2042"
        );
    }

    #[test]
    fn storage_paths_reject_traversal_and_empty_segments() {
        assert!(is_storage_path("workspace.json"));
        assert!(is_storage_path("revisions/a/files/.env"));
        for bad in ["", "/a", "a//b", "a/", "./a", "a/../b", "..", "a\\b", "a\0"] {
            assert!(!is_storage_path(bad), "{bad:?}");
        }
        assert!(is_storage_prefix(""));
        assert!(is_storage_prefix("revisions/x/"));
        assert!(!is_storage_prefix("/"));
    }

    #[test]
    fn entry_paths_are_bounded() {
        assert!(is_entry_path(&"a".repeat(255)));
        assert!(!is_entry_path(&"a".repeat(256)));
        let deep = vec!["b".repeat(200); 21].join("/");
        assert!(!is_entry_path(&deep));
    }
}
