//! Plain file and path work for AML (issue 8 §3: the JS layer keeps only what must be JS).
//!
//! - [`confined`]: confined, atomic file access beneath a materialization root (`<File>`,
//!   `<Include path>`), walking with `openat` so no symlinked parent is followed.
//! - [`host_path`]: the real-path confinement of a built-in Sandbox provider's host
//!   directories (root and cwd inside their boundary).
//! - [`portable_path`]: the logical relative paths of `<Sandbox root|cwd>`, `<Agent cwd>`,
//!   `<Script cwd>` (INVENTORY SB-1), resolved exactly as Node's `path.posix` would.
//! - [`skill_manifest`]: the SKILL.md frontmatter of a `<Skill>` package (YAML).
//! - [`skill_package`]: reading one package directory into a bounded in-memory snapshot.
//! - [`skill_staging`]: writing a snapshot out invocation-privately and removing it.
//! - [`source_read`]: the trusted application reads of `<Skill|File|Include src>`.
//!
//! Everything here is synchronous, blocking file-system code; the binding runs it on a
//! blocking thread and checks the caller's cancellation between entries.

/// JS text rules (shared with the engine and the S3 store).
pub use aml_text as js_text;
pub mod confined;
pub mod host_path;
pub mod portable_path;
pub mod skill_manifest;
pub mod skill_package;
pub mod skill_staging;
pub mod source_read;

pub use portable_path::{resolve_portable_path, PathProblem};
pub use skill_manifest::{parse_skill_manifest, SkillManifest};
pub use skill_package::{
    read_package, PackageSnapshot, ReadError, StagedFile, MAX_PACKAGE_BYTES, MAX_PACKAGE_ENTRIES,
};
pub use skill_staging::{remove_staged, stage_package, StageError};
pub use source_read::{read_skill_source, read_source_file, SkillSource};
