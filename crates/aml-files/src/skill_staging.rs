//! Invocation-private staging of a `<Skill>` package snapshot (docs/SKILL.md): written out
//! only around its Agent's provider call, removed when the call settles.
//!
//! Layout: `<root>/<name>/…` where the facade picks `root` as
//! `<os.tmpdir()>/aml-skill-<uuid>`. `root` is created with mode 0700 and without
//! `recursive`, so a pre-existing path fails instead of being reused; files are created
//! exclusively with 0600 (0700 when they were executable).

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::skill_package::PackageSnapshot;

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// A file-system step failed; whatever this call created was removed again.
    #[error("{syscall} {}: {error}", path.display())]
    Io {
        path: PathBuf,
        syscall: &'static str,
        error: io::Error,
    },
    /// `cancelled` answered true; whatever this call created was removed again.
    #[error("cancelled")]
    Cancelled,
}

/// Writes `snapshot` to `root/<snapshot.name>`. `cancelled` is polled before each step.
/// On failure or cancellation, `root` is removed if this call created it, so nothing is
/// left behind either way.
pub fn stage_package(
    snapshot: &PackageSnapshot,
    root: &Path,
    cancelled: &dyn Fn() -> bool,
) -> Result<(), StageError> {
    let mut dirs = DirBuilder::new();
    dirs.mode(0o700);
    if cancelled() {
        return Err(StageError::Cancelled);
    }
    dirs.create(root).map_err(|error| StageError::Io {
        path: root.to_path_buf(),
        syscall: "mkdir",
        error,
    })?;
    let result = write_tree(snapshot, root, &dirs, cancelled);
    if result.is_err() {
        let _ = fs::remove_dir_all(root);
    }
    result
}

fn write_tree(
    snapshot: &PackageSnapshot,
    root: &Path,
    dirs: &DirBuilder,
    cancelled: &dyn Fn() -> bool,
) -> Result<(), StageError> {
    let base = root.join(&snapshot.name);
    let step = |path: &Path, syscall: &'static str, run: &dyn Fn() -> io::Result<()>| {
        if cancelled() {
            return Err(StageError::Cancelled);
        }
        run().map_err(|error| StageError::Io {
            path: path.to_path_buf(),
            syscall,
            error,
        })
    };
    step(&base, "mkdir", &|| dirs.create(&base))?;
    for dir in &snapshot.dirs {
        let path = base.join(dir);
        step(&path, "mkdir", &|| dirs.create(&path))?;
    }
    for file in &snapshot.files {
        let path = base.join(&file.rel);
        let mode = if file.executable { 0o700 } else { 0o600 };
        step(&path, "open", &|| {
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)?;
            out.write_all(&file.content)
        })?;
    }
    Ok(())
}

/// Removes a staged root; a root that is already gone is not an error.
pub fn remove_staged(root: &Path) -> io::Result<()> {
    match fs::remove_dir_all(root) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill_package::StagedFile;
    use std::os::unix::fs::PermissionsExt;

    fn snapshot() -> PackageSnapshot {
        PackageSnapshot {
            name: "review".into(),
            description: "d".into(),
            dirs: vec!["refs".into()],
            files: vec![
                StagedFile {
                    rel: "SKILL.md".into(),
                    content: b"m".to_vec(),
                    executable: false,
                },
                StagedFile {
                    rel: "refs/run.sh".into(),
                    content: b"#!".to_vec(),
                    executable: true,
                },
            ],
        }
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn stages_with_private_modes_and_removes() {
        let root = std::env::temp_dir().join(format!("aml-files-stage-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        stage_package(&snapshot(), &root, &|| false).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(fs::read(root.join("review/SKILL.md")).unwrap(), b"m");
        assert_eq!(mode(&root.join("review/SKILL.md")), 0o600);
        assert_eq!(mode(&root.join("review/refs/run.sh")), 0o700);
        // An existing root is never reused.
        assert!(matches!(
            stage_package(&snapshot(), &root, &|| false),
            Err(StageError::Io {
                syscall: "mkdir",
                ..
            })
        ));
        assert!(root.exists());
        remove_staged(&root).unwrap();
        assert!(!root.exists());
        remove_staged(&root).unwrap();
    }

    #[test]
    fn a_failure_or_cancellation_leaves_nothing() {
        let root =
            std::env::temp_dir().join(format!("aml-files-stage-fail-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let mut bad = snapshot();
        bad.dirs.clear();
        assert!(matches!(
            stage_package(&bad, &root, &|| false),
            Err(StageError::Io {
                syscall: "open",
                ..
            })
        ));
        assert!(!root.exists());
        let calls = std::cell::Cell::new(0);
        let cancel_late = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        assert!(matches!(
            stage_package(&snapshot(), &root, &cancel_late),
            Err(StageError::Cancelled)
        ));
        assert!(!root.exists());
        let missing = std::env::temp_dir().join("aml-files-no-such-dir/x");
        assert!(matches!(
            stage_package(&snapshot(), &missing, &|| false),
            Err(StageError::Io { ref error, .. }) if error.kind() == io::ErrorKind::NotFound
        ));
    }
}
