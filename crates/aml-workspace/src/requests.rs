//! What a persistence engine is configured with and asked to do: its options, a load and a
//! save request (the Rust side of `WorkspacePersistenceOptions` and the `<Workspace>` props).

use std::path::PathBuf;

use crate::index::Format;
use crate::sweep::DEFAULT_SWEEP_BUDGET;

/// `WorkspacePersistenceOptions` minus the storage (defaults: archive, 256 MiB, 100 000
/// entries, 1 GiB), and the sweep's bound: deletions per save (store) and per acquisition
/// (the temporary directory's abandoned materializations).
#[derive(Clone, Debug)]
pub struct PersistenceOptions {
    pub format: Format,
    pub max_archive_bytes: u64,
    pub max_entries: u64,
    pub max_extracted_bytes: u64,
    pub temporary_directory: PathBuf,
    pub sweep_budget: usize,
    /// The Workspace id the caller acquired, for messages only: a failed save names it (the
    /// storage lease knows paths and keys, not which Workspace the user asked for).
    pub workspace_id: Option<String>,
}

impl PersistenceOptions {
    pub fn new(temporary_directory: PathBuf) -> Self {
        PersistenceOptions {
            format: Format::Archive,
            max_archive_bytes: 256 * 1024 * 1024,
            max_entries: 100_000,
            max_extracted_bytes: 1024 * 1024 * 1024,
            temporary_directory,
            sweep_budget: DEFAULT_SWEEP_BUDGET,
            workspace_id: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct LoadRequest {
    pub revision: String,
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct SaveRequest {
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
    pub gitignore: bool,
    pub retention: usize,
}

impl Default for SaveRequest {
    /// What `save={true}` means.
    fn default() -> Self {
        SaveRequest {
            include: None,
            exclude: Vec::new(),
            gitignore: true,
            retention: 1,
        }
    }
}
