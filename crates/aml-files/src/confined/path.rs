//! Portable path checks: the facade validates authored paths with the documented messages
//! first; this is the crate's own guard so no caller can walk outside the root.

use crate::portable_path::{shape_problem, PathProblem};

/// Why a portable path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path must be a non-empty relative forward-slash path")]
    NotRelative,
    #[error("path cannot contain parent traversal")]
    Traversal,
    #[error("path must identify a file")]
    NotAFile,
    #[error("path cannot contain NUL bytes")]
    Nul,
}

impl From<PathProblem> for PathError {
    fn from(problem: PathProblem) -> Self {
        match problem {
            PathProblem::Nul => Self::Nul,
            PathProblem::Traversal => Self::Traversal,
            PathProblem::Empty | PathProblem::NotRelative | PathProblem::Escapes => {
                Self::NotRelative
            }
        }
    }
}

/// Splits `path` into its parent segments and final name. `.` and empty segments are
/// dropped (`a//./b` is `a/b`); `..`, absolute paths and backslashes are refused.
pub fn portable_segments(path: &str) -> Result<(Vec<&str>, &str), PathError> {
    // The shape rules are the portable path's own (crate::portable_path), not a copy.
    if let Some(problem) = shape_problem(path) {
        return Err(problem.into());
    }
    if path.is_empty() {
        return Err(PathError::NotRelative);
    }
    let mut segments: Vec<&str> = path
        .split('/')
        .filter(|segment| !matches!(*segment, "" | "."))
        .collect();
    let name = segments.pop().ok_or(PathError::NotAFile)?;
    Ok((segments, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_normalises() {
        assert_eq!(
            portable_segments("a/./b//c.md"),
            Ok((vec!["a", "b"], "c.md"))
        );
        assert_eq!(portable_segments("c.md"), Ok((vec![], "c.md")));
    }

    #[test]
    fn refuses_unconfined_shapes() {
        assert_eq!(
            portable_segments("/etc/passwd"),
            Err(PathError::NotRelative)
        );
        assert_eq!(portable_segments("a\\b"), Err(PathError::NotRelative));
        assert_eq!(portable_segments(""), Err(PathError::NotRelative));
        assert_eq!(portable_segments("a/../../b"), Err(PathError::Traversal));
        assert_eq!(portable_segments(".."), Err(PathError::Traversal));
        assert_eq!(portable_segments("."), Err(PathError::NotAFile));
        assert_eq!(portable_segments("a/\0"), Err(PathError::Nul));
    }
}
