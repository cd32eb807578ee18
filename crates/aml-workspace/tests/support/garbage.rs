//! An inventory of what is left that no index references: in the store (revisions, owner
//! records, scratch files) and in the temporary directory (materialization roots).

use std::fs;
use std::path::Path;

use aml_workspace::WorkspaceIndex;

/// What is left that no index references.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Garbage {
    /// Revision ids in `revisions/` the index does not name.
    pub unindexed: Vec<String>,
    pub records: Vec<String>,
    pub scratch: Vec<String>,
    pub materializations: Vec<String>,
}

impl Garbage {
    pub fn is_empty(&self) -> bool {
        *self == Garbage::default()
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The revision ids `workspace.json` of `segment` names, newest first.
pub fn indexed(segment: &Path) -> Vec<String> {
    fs::read(segment.join("workspace.json"))
        .map(|bytes| WorkspaceIndex::parse(&bytes).unwrap().revisions)
        .unwrap_or_default()
        .into_iter()
        .map(|revision| revision.id)
        .collect()
}

/// The inventory of identity root `segment` and temporary directory `tmp`.
pub fn garbage(segment: &Path, tmp: &Path) -> Garbage {
    let indexed = indexed(segment);
    let mut scratch = Vec::new();
    let folders = names(&segment.join("revisions"))
        .into_iter()
        .map(|name| segment.join("revisions").join(name));
    let dirs = [
        segment.to_path_buf(),
        segment.join("owners"),
        segment.join("revisions"),
    ];
    for dir in dirs.into_iter().chain(folders) {
        scratch.extend(
            names(&dir)
                .into_iter()
                .filter(|name| name.starts_with(".aml-tmp-")),
        );
    }
    Garbage {
        unindexed: names(&segment.join("revisions"))
            .into_iter()
            .filter(|name| !name.starts_with(".aml-tmp-"))
            .map(|name| name.trim_end_matches(".tar.gz").to_string())
            .filter(|id| !indexed.contains(id))
            .collect(),
        records: names(&segment.join("owners"))
            .into_iter()
            .filter(|name| !name.starts_with(".aml-tmp-"))
            .collect(),
        scratch,
        materializations: names(tmp)
            .into_iter()
            .filter(|name| name.starts_with("aml-workspace-"))
            .collect(),
    }
}
