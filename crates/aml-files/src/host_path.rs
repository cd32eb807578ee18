//! Host path confinement for the built-in Sandbox providers (local, Docker, Daytona, Modal):
//! a configured directory is judged by its real path (every symlink followed), which must be
//! a directory and stay inside the given boundaries. The one implementation of that rule;
//! each provider words its own messages from the [`HostDirectory`] answer.

use std::path::{Path, PathBuf};

/// What the host knows about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDirectory {
    /// The real path (`realpath(3)`), or `None` when it cannot be resolved (missing…).
    pub real: Option<PathBuf>,
    /// The real path is a directory.
    pub directory: bool,
    /// For each boundary, in order: the real path is the boundary or below it.
    pub inside: Vec<bool>,
}

/// True when `path` is `boundary` or below it, compared by whole components.
pub fn is_within(path: &Path, boundary: &Path) -> bool {
    path.starts_with(boundary)
}

/// Resolves `path` and judges it against each of `boundaries` (real paths themselves).
pub fn resolve_host_directory(path: &Path, boundaries: &[PathBuf]) -> HostDirectory {
    match std::fs::canonicalize(path) {
        Err(_) => HostDirectory {
            real: None,
            directory: false,
            inside: vec![false; boundaries.len()],
        },
        Ok(real) => HostDirectory {
            directory: std::fs::metadata(&real).is_ok_and(|m| m.is_dir()),
            inside: boundaries.iter().map(|b| is_within(&real, b)).collect(),
            real: Some(real),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_real_paths_by_components() {
        assert!(is_within(Path::new("/a/b"), Path::new("/a")));
        assert!(is_within(Path::new("/a"), Path::new("/a")));
        assert!(!is_within(Path::new("/ab"), Path::new("/a")));
        assert!(!is_within(Path::new("/"), Path::new("/a")));
    }

    #[test]
    fn follows_links_and_reports_escapes() {
        let base = std::env::temp_dir().join(format!("aml-host-path-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("w/in")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::fs::write(base.join("w/file"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("out"), base.join("w/link")).unwrap();
        let w = std::fs::canonicalize(base.join("w")).unwrap();
        let inside = resolve_host_directory(&w.join("in"), std::slice::from_ref(&w));
        assert_eq!(
            (inside.directory, inside.inside.clone()),
            (true, vec![true])
        );
        let link = resolve_host_directory(&w.join("link"), std::slice::from_ref(&w));
        assert_eq!((link.directory, link.inside), (true, vec![false]));
        let file = resolve_host_directory(&w.join("file"), std::slice::from_ref(&w));
        assert_eq!((file.directory, file.inside), (false, vec![true]));
        let missing = resolve_host_directory(&w.join("missing"), &[w.clone(), w.join("in")]);
        assert_eq!(missing.real, None);
        assert_eq!(missing.inside, vec![false, false]);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
