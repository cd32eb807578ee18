//! Portable logical paths (INVENTORY SB-1): relative, forward-slash and traversal-free, so
//! they mean the same on every host and guest. The result is Node's
//! `path.posix.join(base, value)`, reproduced here exactly (trailing slash included).

use crate::js_text::js_trim;

/// Why a value is not a portable path; the facade prefixes the prop label ("<Sandbox> root").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathProblem {
    #[error("must be a non-empty string")]
    Empty,
    #[error("must be a relative forward-slash path")]
    NotRelative,
    #[error("cannot contain parent traversal")]
    Traversal,
    #[error("cannot escape its parent root")]
    Escapes,
    #[error("cannot contain NUL bytes")]
    Nul,
}

/// Why a `SandboxCommand` cwd was refused (INVENTORY PA-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CwdProblem {
    /// Not a normalized relative forward-slash path.
    NotNormalized,
    /// Normalized, but not the root or below it.
    Outside,
}

/// The shape rules every portable path obeys, in their documented order after emptiness:
/// no NUL byte, relative and forward-slash (no backslash, POSIX or Win32 drive root), and no
/// `..` segment (checked on the authored segments, before normalisation could fold "a/../b").
/// The one implementation, shared by [`resolve_portable_path`] and the confined access.
pub fn shape_problem(value: &str) -> Option<PathProblem> {
    if value.contains('\0') {
        return Some(PathProblem::Nul);
    }
    if value.contains('\\') || value.starts_with('/') || has_drive_root(value) {
        return Some(PathProblem::NotRelative);
    }
    if value.split('/').any(|segment| segment == "..") {
        return Some(PathProblem::Traversal);
    }
    None
}

/// A normalized relative forward-slash path: non-empty, no backslash or NUL, neither POSIX-
/// nor Win32-absolute, and its own `posix.normalize` (so `..` alone may pass; [`is_inside`]
/// refuses it).
pub fn is_normalized_relative(value: &str) -> bool {
    !value.is_empty()
        && !value.contains('\\')
        && !value.contains('\0')
        && !value.starts_with('/')
        && !has_drive_root(value)
        && normalize(value) == value
}

/// True when the normalized relative `cwd` is `root` or below it (trailing slashes aside).
pub fn is_inside(cwd: &str, root: &str) -> bool {
    if cwd == ".." || cwd.starts_with("../") {
        return false;
    }
    let normalized = normalize(root);
    let base = normalized.trim_end_matches('/');
    let path = cwd.trim_end_matches('/');
    base == "." || base.is_empty() || path == base || {
        path.len() > base.len() && path.starts_with(base) && path.as_bytes()[base.len()] == b'/'
    }
}

/// The `SandboxCommand.from` cwd rule: normalized relative, then inside `root`.
pub fn command_cwd_problem(cwd: &str, root: &str) -> Option<CwdProblem> {
    if !is_normalized_relative(cwd) {
        Some(CwdProblem::NotNormalized)
    } else if !is_inside(cwd, root) {
        Some(CwdProblem::Outside)
    } else {
        None
    }
}

/// `posix.join(base, value)` after the SB-1 checks (and the NUL-byte check), in the documented order.
pub fn resolve_portable_path(value: &str, base: &str) -> Result<String, PathProblem> {
    if js_trim(value).is_empty() {
        return Err(PathProblem::Empty);
    }
    if let Some(problem) = shape_problem(value) {
        return Err(problem);
    }
    let resolved = join(base, value);
    let root = normalize(base);
    let inside = if root == "." {
        resolved != ".." && !resolved.starts_with("../") && !resolved.starts_with('/')
    } else {
        resolved == root || {
            let prefix = if root.ends_with('/') {
                root.clone()
            } else {
                format!("{root}/")
            };
            resolved.starts_with(&prefix)
        }
    };
    if inside {
        Ok(resolved)
    } else {
        Err(PathProblem::Escapes)
    }
}

/// `win32.isAbsolute` beyond a leading separator: a drive letter, a colon and a separator.
fn has_drive_root(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() > 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'/' | b'\\')
}

/// `path.posix.join(a, b)` for two strings (empty parts are skipped, as Node does).
pub fn join(a: &str, b: &str) -> String {
    let joined = match (a.is_empty(), b.is_empty()) {
        (true, true) => return ".".into(),
        (true, false) => b.to_string(),
        (false, true) => a.to_string(),
        (false, false) => format!("{a}/{b}"),
    };
    normalize(&joined)
}

/// `path.posix.normalize(path)`.
pub fn normalize(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let absolute = path.starts_with('/');
    let trailing = path.ends_with('/');
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|last| *last != "..") {
                    segments.pop();
                } else if !absolute {
                    segments.push("..");
                }
            }
            other => segments.push(other),
        }
    }
    let mut out = segments.join("/");
    if out.is_empty() {
        if absolute {
            return "/".into();
        }
        out.push('.');
    }
    if trailing {
        out.push('/');
    }
    if absolute {
        out.insert(0, '/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_like_node_posix() {
        for (input, expected) in [
            ("", "."),
            (".", "."),
            ("./", "./"),
            ("a//b/./c/", "a/b/c/"),
            ("a/../..", ".."),
            ("../a/../../b", "../../b"),
            ("/..", "/"),
            ("/a/../../b", "/b"),
            ("a/..", "."),
            ("a/../", "./"),
            ("/", "/"),
            ("//", "/"),
            ("/a/", "/a/"),
        ] {
            assert_eq!(normalize(input), expected, "{input}");
        }
        assert_eq!(join(".", "src"), "src");
        assert_eq!(join("repo", "src/"), "repo/src/");
        assert_eq!(join("/tmp/x", "a"), "/tmp/x/a");
    }

    #[test]
    fn resolves_and_rejects_in_the_documented_order() {
        assert_eq!(resolve_portable_path("src", "."), Ok("src".into()));
        assert_eq!(
            resolve_portable_path("./a//b/", "repo"),
            Ok("repo/a/b/".into())
        );
        assert_eq!(resolve_portable_path(".", "repo"), Ok("repo".into()));
        assert_eq!(
            resolve_portable_path("a..b/..c", "."),
            Ok("a..b/..c".into())
        );
        assert_eq!(
            resolve_portable_path("bin", "/host/app"),
            Ok("/host/app/bin".into())
        );
        assert_eq!(
            resolve_portable_path(" \u{A0}", "."),
            Err(PathProblem::Empty)
        );
        assert_eq!(resolve_portable_path("", "."), Err(PathProblem::Empty));
        for value in ["/abs", "a\\b", "C:/x", "c:\\x"] {
            assert_eq!(
                resolve_portable_path(value, "."),
                Err(PathProblem::NotRelative),
                "{value}"
            );
        }
        assert_eq!(resolve_portable_path("C:x", "."), Ok("C:x".into()));
        assert_eq!(
            resolve_portable_path("a/../b", "."),
            Err(PathProblem::Traversal)
        );
        assert_eq!(
            resolve_portable_path("..", "."),
            Err(PathProblem::Traversal)
        );
        // A base that itself points above the root cannot be escaped from further.
        assert_eq!(resolve_portable_path("x", ".."), Ok("../x".into()));
        assert_eq!(resolve_portable_path("x", "../.."), Ok("../../x".into()));
        assert_eq!(
            PathProblem::Escapes.to_string(),
            "cannot escape its parent root"
        );
    }

    #[test]
    fn refuses_nul_bytes_after_emptiness() {
        assert_eq!(resolve_portable_path("a\0b", "."), Err(PathProblem::Nul));
        assert_eq!(resolve_portable_path("/\0", "."), Err(PathProblem::Nul));
        assert_eq!(resolve_portable_path(" ", "."), Err(PathProblem::Empty));
        assert_eq!(PathProblem::Nul.to_string(), "cannot contain NUL bytes");
    }

    #[test]
    fn judges_command_cwds_like_sandbox_command() {
        for cwd in ["", "./a", "a//b", "/a", "a\\b", "C:/a", "a\0"] {
            assert_eq!(
                command_cwd_problem(cwd, "."),
                Some(CwdProblem::NotNormalized),
                "{cwd:?}"
            );
        }
        for (cwd, root) in [
            ("..", "."),
            ("../a", "."),
            ("ab", "a"),
            ("b", "a"),
            ("a", "a/b"),
        ] {
            assert_eq!(
                command_cwd_problem(cwd, root),
                Some(CwdProblem::Outside),
                "{cwd} {root}"
            );
        }
        for (cwd, root) in [
            (".", "."),
            ("a", "."),
            ("a", "a"),
            ("a/b", "a/"),
            ("a/b", "./a"),
            ("x", ""),
        ] {
            assert_eq!(command_cwd_problem(cwd, root), None, "{cwd} {root}");
        }
    }
}
