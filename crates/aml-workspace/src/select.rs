//! Which paths of a materialization a save records (and which a load keeps): include and
//! exclude globs (Globby syntax: `*` stays inside one segment, `**` crosses them, dot files
//! match), nested `.gitignore` files when `gitignore` is on and `include` is unset, and
//! excludes that always win. Directories needed to hold a selected entry are selected too.

use std::collections::BTreeSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;

use crate::error::{Result, WorkspaceError};
use crate::paths::is_entry_path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
        }
    }
}

/// One selected entry. `mode` holds the permission bits only; `size` is 0 for directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotEntry {
    pub path: String,
    pub kind: EntryKind,
    pub mode: u32,
    pub size: u64,
    /// Seconds since the epoch (kept in archives).
    pub mtime: u64,
}

/// Compiled include/exclude patterns.
pub struct Selection {
    include: Option<GlobSet>,
    exclude: GlobSet,
    gitignore: bool,
}

fn compile(patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob: Glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|error| {
                WorkspaceError::type_error(format!("Workspace pattern \"{pattern}\" is invalid"))
                    .with_cause(WorkspaceError::error(error.to_string()))
            })?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|error| WorkspaceError::type_error(error.to_string()))
}

impl Selection {
    /// The save selection. `.gitignore` applies only without `include`.
    pub fn new(include: Option<&[String]>, exclude: &[String], gitignore: bool) -> Result<Self> {
        Ok(Selection {
            include: include.map(compile).transpose()?,
            exclude: compile(exclude)?,
            gitignore: gitignore && include.is_none(),
        })
    }

    fn excluded(&self, path: &str) -> bool {
        self.exclude.is_match(path)
    }

    fn included(&self, path: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(path))
    }
}

/// Bounds a snapshot must respect (the restore limits, so a save never produces a revision
/// its own restore would refuse).
#[derive(Clone, Copy, Debug)]
pub struct SnapshotLimits {
    pub max_entries: u64,
    pub max_bytes: u64,
    /// Entries the stored form adds beyond the selection: 1 for the archive format, whose
    /// documented limit counts the archive's root entry (selected files + directories + 1
    /// must fit), 0 otherwise.
    pub extra_entries: u64,
}

impl SnapshotLimits {
    fn exceeded(&self, selected: usize) -> bool {
        (selected as u64).saturating_add(self.extra_entries) > self.max_entries
    }
}

fn relative(root: &Path, path: &Path) -> Result<String> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel
        .to_str()
        .filter(|text| is_entry_path(text) && !text.contains('\\'));
    text.map(str::to_owned).ok_or_else(|| {
        WorkspaceError::error(format!(
            "Workspace snapshot contains unsafe path \"{}\"",
            rel.to_string_lossy()
        ))
    })
}

/// Walks `root` and returns the selected entries sorted by path (parents before children).
/// Symbolic links and special files that the selection reaches are errors.
pub fn snapshot(
    root: &Path,
    selection: &Selection,
    limits: SnapshotLimits,
) -> Result<Vec<SnapshotEntry>> {
    let mut walker = WalkBuilder::new(root);
    walker
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if selection.gitignore {
        walker.git_ignore(true).require_git(false);
    }
    let prune_root = root.to_path_buf();
    let exclude = selection.exclude.clone();
    // An excluded directory is not descended into (fast-glob's deep filter).
    walker.filter_entry(move |entry| {
        if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_dir()) {
            return true;
        }
        let rel = entry
            .path()
            .strip_prefix(&prune_root)
            .unwrap_or(entry.path());
        rel.to_str().is_none_or(|rel| !exclude.is_match(rel))
    });

    let mut entries = Vec::new();
    let mut directories = Vec::new();
    let mut bytes: u64 = 0;
    for item in walker.build() {
        let entry = item.map_err(|error| WorkspaceError::error(error.to_string()))?;
        if entry.depth() == 0 {
            continue;
        }
        let path = relative(root, entry.path())?;
        let metadata = std::fs::symlink_metadata(entry.path())
            .map_err(|error| WorkspaceError::io(&error, "lstat", entry.path()))?;
        let file_type = metadata.file_type();
        if file_type.is_dir() {
            directories.push(SnapshotEntry {
                path,
                kind: EntryKind::Directory,
                mode: metadata.mode() & 0o7777,
                size: 0,
                mtime: metadata.mtime().max(0) as u64,
            });
            continue;
        }
        if selection.excluded(&path) || !selection.included(&path) {
            continue;
        }
        if file_type.is_symlink() {
            return Err(WorkspaceError::error(format!(
                "Workspace selection contains unsupported symbolic link \"{path}\""
            )));
        }
        if !file_type.is_file() || file_type.is_fifo() || file_type.is_socket() {
            return Err(WorkspaceError::error(format!(
                "Workspace selection contains unsupported entry \"{path}\""
            )));
        }
        bytes += metadata.len();
        if bytes > limits.max_bytes {
            return Err(WorkspaceError::range(format!(
                "Workspace snapshot exceeded {} bytes",
                limits.max_bytes
            )));
        }
        entries.push(SnapshotEntry {
            path,
            kind: EntryKind::File,
            mode: metadata.mode() & 0o7777,
            size: metadata.len(),
            mtime: metadata.mtime().max(0) as u64,
        });
        if limits.exceeded(entries.len()) {
            return Err(exceeded_entries(limits));
        }
    }
    let kept = kept_directories(&entries, &directories, |dir| {
        !selection.excluded(dir)
            && selection.included(dir)
            && std::fs::read_dir(root.join(dir)).is_ok_and(|mut it| it.next().is_none())
    });
    entries.extend(
        directories
            .into_iter()
            .filter(|dir| kept.contains(&dir.path)),
    );
    if limits.exceeded(entries.len()) {
        return Err(exceeded_entries(limits));
    }
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

fn exceeded_entries(limits: SnapshotLimits) -> WorkspaceError {
    WorkspaceError::range(format!(
        "Workspace snapshot exceeded {} entries",
        limits.max_entries
    ))
}

/// Directories to keep: ancestors of a selected file, plus directories that are selected
/// themselves and are empty on disk (an empty directory the selection names).
fn kept_directories(
    files: &[SnapshotEntry],
    directories: &[SnapshotEntry],
    selected_empty: impl Fn(&str) -> bool,
) -> BTreeSet<String> {
    fn add_ancestors(path: &str, kept: &mut BTreeSet<String>) {
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            if !kept.insert(path[..slash].to_string()) {
                break;
            }
            end = slash;
        }
    }
    let mut kept = BTreeSet::new();
    for file in files {
        add_ancestors(&file.path, &mut kept);
    }
    for (i, dir) in directories.iter().enumerate() {
        // Sorted walk: a directory's first child, if any, comes right after it.
        let has_child_dir = directories.get(i + 1).is_some_and(|next| {
            next.path.len() > dir.path.len()
                && next.path.starts_with(&dir.path)
                && next.path.as_bytes()[dir.path.len()] == b'/'
        });
        if !kept.contains(&dir.path) && !has_child_dir && selected_empty(&dir.path) {
            kept.insert(dir.path.clone());
            add_ancestors(&dir.path, &mut kept);
        }
    }
    kept
}

/// After a restore, removes every entry the load selection does not keep (no `.gitignore`:
/// a load selects from what the revision holds).
pub fn prune(root: &Path, include: Option<&[String]>, exclude: &[String]) -> Result<()> {
    if include.is_none() && exclude.is_empty() {
        return Ok(());
    }
    let selection = Selection::new(include, exclude, false)?;
    let unbounded = SnapshotLimits {
        extra_entries: 0,
        max_entries: u64::MAX,
        max_bytes: u64::MAX,
    };
    let keep: BTreeSet<String> = snapshot(root, &selection, unbounded)?
        .into_iter()
        .map(|entry| entry.path)
        .collect();
    let everything = Selection::new(None, &[], false)?;
    for entry in snapshot(root, &everything, unbounded)?.into_iter().rev() {
        if keep.contains(&entry.path) {
            continue;
        }
        let path = root.join(&entry.path);
        let removed = match entry.kind {
            EntryKind::File => std::fs::remove_file(&path),
            EntryKind::Directory => std::fs::remove_dir_all(&path),
        };
        match removed {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(WorkspaceError::io(&error, "rm", &path)),
        }
    }
    Ok(())
}
