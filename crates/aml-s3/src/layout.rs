//! Key layout `<prefix>/<workspaceStorageSegment(id)>/<path>` and the checks on prefixes and
//! storage paths (BW-3).

use aml_text::is_normalized;
use aml_workspace::paths::workspace_storage_segment;

/// The default object namespace.
pub const DEFAULT_PREFIX: &str = "aml/workspaces";

/// Why a prefix was refused: the exact BW-3 `TypeError` text.
pub fn check_prefix(prefix: &str) -> Result<(), &'static str> {
    if !is_normalized(prefix) || prefix.contains('\0') {
        return Err("S3 Workspace prefix must be a non-empty normalized string");
    }
    if prefix.starts_with('/') || prefix.ends_with('/') || prefix.split('/').any(str::is_empty) {
        return Err("S3 Workspace prefix must not start or end with / or contain empty segments");
    }
    if prefix.split('/').any(|s| s == "." || s == "..") || prefix.contains('\\') {
        return Err("S3 Workspace prefix must not contain traversal segments");
    }
    Ok(())
}

/// A storage path (`workspace.json`, `revisions/<id>/files/a.txt`): relative, `/`-separated,
/// no empty, `.` or `..` segments, no backslash and no control characters (S3 keys with
/// control characters are not portable across S3-compatible services).
pub fn is_valid_storage_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && !path.chars().any(|c| c.is_control())
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// A list prefix is a storage path that may end with `/`, or empty for the whole namespace.
pub fn is_valid_list_prefix(prefix: &str) -> bool {
    prefix.is_empty() || is_valid_storage_path(prefix.strip_suffix('/').unwrap_or(prefix))
}

/// The object keys of one Workspace id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceKeys {
    /// `<prefix>/<segment>` without a trailing slash.
    root: String,
}

impl WorkspaceKeys {
    /// The namespace of `id` under `prefix` (both already validated by the caller's options;
    /// the id is checked here).
    pub fn new(prefix: &str, id: &str) -> Result<Self, &'static str> {
        let segment = workspace_storage_segment(id)?;
        Ok(Self {
            root: format!("{prefix}/{segment}"),
        })
    }

    /// `<prefix>/<segment>`.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The key of a (validated) storage path.
    pub fn key(&self, path: &str) -> String {
        format!("{}/{path}", self.root)
    }

    /// The lease object.
    pub fn lock_key(&self) -> String {
        self.key("lock.json")
    }

    /// The storage path of a key inside this namespace, if it is one.
    pub fn path_of<'k>(&self, key: &'k str) -> Option<&'k str> {
        key.strip_prefix(self.root.as_str())?.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_rules_in_order() {
        assert_eq!(check_prefix("aml/workspaces"), Ok(()));
        assert_eq!(check_prefix("production/reviews"), Ok(()));
        let normalized = "S3 Workspace prefix must be a non-empty normalized string";
        for p in ["", " a", "a ", "a\0b"] {
            assert_eq!(check_prefix(p), Err(normalized), "{p:?}");
        }
        let slashes = "S3 Workspace prefix must not start or end with / or contain empty segments";
        for p in ["/a", "a/", "a//b", "/"] {
            assert_eq!(check_prefix(p), Err(slashes), "{p:?}");
        }
        let traversal = "S3 Workspace prefix must not contain traversal segments";
        for p in ["..", "a/../b", "./a", "a/.", "a\\b"] {
            assert_eq!(check_prefix(p), Err(traversal), "{p:?}");
        }
    }

    #[test]
    fn storage_paths() {
        for ok in [
            "workspace.json",
            "revisions/r1.tar.gz",
            "revisions/r1/files/a b/é.txt",
            "..a",
        ] {
            assert!(is_valid_storage_path(ok), "{ok:?}");
        }
        for bad in [
            "", "/a", "a/", "a//b", "../a", "a/./b", "a\\b", "a\nb", "a\0",
        ] {
            assert!(!is_valid_storage_path(bad), "{bad:?}");
        }
        assert!(is_valid_list_prefix(""));
        assert!(is_valid_list_prefix("revisions/"));
        assert!(is_valid_list_prefix("revisions/r1"));
        assert!(!is_valid_list_prefix("/"));
        assert!(!is_valid_list_prefix("../"));
    }

    #[test]
    fn keys_follow_the_layout() {
        let keys = WorkspaceKeys::new(DEFAULT_PREFIX, "review/42").unwrap();
        assert_eq!(keys.root(), "aml/workspaces/review%2F42");
        assert_eq!(
            keys.key("workspace.json"),
            "aml/workspaces/review%2F42/workspace.json"
        );
        assert_eq!(keys.lock_key(), "aml/workspaces/review%2F42/lock.json");
        assert_eq!(
            keys.path_of("aml/workspaces/review%2F42/revisions/a"),
            Some("revisions/a")
        );
        assert_eq!(keys.path_of("aml/workspaces/review%2F421/x"), None);
        assert!(WorkspaceKeys::new(DEFAULT_PREFIX, " ").is_err());
    }
}
