//! The archive format: one gzip-compressed tar per revision, written from a snapshot and
//! restored with limits (entries, extracted bytes) and confinement (only files and
//! directories, only safe relative paths, nothing outside the root).

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use tar::{EntryType, Header};

use crate::cancel::{Cancel, Phase};
use crate::confine::{create_file_with, dir_mode, file_mode, KnownDirs, Refused};
use crate::error::{Result, WorkspaceError};
use crate::paths::is_entry_path;
use crate::select::{EntryKind, SnapshotEntry};

pub const CONTENT_TYPE: &str = "application/gzip";

/// Restore bounds (WP-1 `maxEntries`, `maxExtractedBytes`).
#[derive(Clone, Copy, Debug)]
pub struct ExtractLimits {
    pub max_entries: u64,
    pub max_extracted_bytes: u64,
}

/// Writes the archive of `entries` (taken from `root`) to `out`; returns its size.
/// Checks `cancel` before each entry.
pub fn write_archive(
    root: &Path,
    entries: &[SnapshotEntry],
    out: &Path,
    cancel: &Cancel,
) -> Result<u64> {
    let file = File::create(out).map_err(|e| WorkspaceError::io(&e, "open", out))?;
    // Level 3: within a few percent of the default's size on source trees, at half its cost.
    let gzip = GzEncoder::new(BufWriter::with_capacity(1 << 16, file), Compression::new(3));
    let mut builder = tar::Builder::new(gzip);
    for entry in entries {
        cancel.entry(Phase::Save, &entry.path)?;
        let mut header = Header::new_gnu();
        header.set_mtime(entry.mtime);
        header.set_uid(0);
        header.set_gid(0);
        match entry.kind {
            EntryKind::Directory => {
                header.set_entry_type(EntryType::Directory);
                header.set_mode(entry.mode);
                header.set_size(0);
                builder
                    .append_data(&mut header, format!("{}/", entry.path), io::empty())
                    .map_err(|e| WorkspaceError::io(&e, "write", out))?;
            }
            EntryKind::File => {
                let path = root.join(&entry.path);
                let source = fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&path)
                    .map_err(|e| WorkspaceError::io(&e, "open", &path))?;
                let meta = source
                    .metadata()
                    .map_err(|e| WorkspaceError::io(&e, "fstat", &path))?;
                header.set_entry_type(EntryType::Regular);
                header.set_mode(meta.permissions().mode() & 0o7777);
                header.set_size(meta.len());
                // `take` keeps the body to the header's size even if the file grows meanwhile.
                builder
                    .append_data(&mut header, &entry.path, source.take(meta.len()))
                    .map_err(|e| WorkspaceError::io(&e, "write", out))?;
            }
        }
    }
    let gzip = builder
        .into_inner()
        .map_err(|e| WorkspaceError::io(&e, "write", out))?;
    let mut writer = gzip
        .finish()
        .map_err(|e| WorkspaceError::io(&e, "write", out))?;
    writer
        .flush()
        .map_err(|e| WorkspaceError::io(&e, "write", out))?;
    let size = writer
        .get_ref()
        .metadata()
        .map_err(|e| WorkspaceError::io(&e, "fstat", out))?
        .len();
    Ok(size)
}

fn validation(cause: impl ToString) -> WorkspaceError {
    WorkspaceError::error("Workspace archive validation failed")
        .with_cause(WorkspaceError::error(cause.to_string()))
}

fn unsafe_path(path: &str) -> WorkspaceError {
    WorkspaceError::error(format!("Workspace archive contains unsafe path \"{path}\""))
}

/// node-tar's names for entry types, as the unsupported-type message reports them.
fn type_name(kind: EntryType) -> String {
    match kind {
        EntryType::Symlink => "SymbolicLink".into(),
        EntryType::Link => "Link".into(),
        EntryType::Char => "CharacterDevice".into(),
        EntryType::Block => "BlockDevice".into(),
        EntryType::Fifo => "FIFO".into(),
        EntryType::GNUSparse => "SparseFile".into(),
        other => format!("{:?}", other.as_byte() as char),
    }
}

/// Extracts `archive` into the empty directory `dest`. Any failure leaves partial content in
/// `dest` only (the caller removes it); no byte is written outside `dest`.
/// Checks `cancel` before each entry.
pub fn extract_archive(
    archive: &Path,
    dest: &Path,
    limits: ExtractLimits,
    cancel: &Cancel,
) -> Result<()> {
    let file = File::open(archive).map_err(|e| WorkspaceError::io(&e, "open", archive))?;
    let mut tar = tar::Archive::new(GzDecoder::new(BufReader::with_capacity(1 << 16, file)));
    let mut count: u64 = 0;
    let mut extracted: u64 = 0;
    let mut directories: Vec<(String, u32)> = Vec::new();
    let mut known = KnownDirs::default();
    for item in tar.entries().map_err(validation)? {
        let mut entry = item.map_err(validation)?;
        let kind = entry.header().entry_type();
        if matches!(kind, EntryType::XGlobalHeader) {
            continue;
        }
        count += 1;
        if count > limits.max_entries {
            return Err(WorkspaceError::range(format!(
                "Workspace archive exceeded {} entries",
                limits.max_entries
            )));
        }
        let raw = entry.path_bytes().into_owned();
        let text = String::from_utf8_lossy(&raw).into_owned();
        let trimmed = text.strip_prefix("./").unwrap_or(&text);
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if (trimmed.is_empty() || trimmed == ".") && kind == EntryType::Directory {
            continue; // the archive root entry some writers add
        }
        if std::str::from_utf8(&raw).is_err() || !is_entry_path(trimmed) {
            return Err(unsafe_path(&text));
        }
        cancel.entry(Phase::Restore, trimmed)?;
        let mode = entry.header().mode().map_err(validation)?;
        match kind {
            EntryType::Directory => {
                known
                    .ensure(dest, trimmed)
                    .map_err(|refused| refusal(refused, &text))?;
                directories.push((trimmed.to_string(), mode));
            }
            EntryType::Regular | EntryType::Continuous => {
                let size = entry.size();
                extracted = extracted.saturating_add(size);
                if extracted > limits.max_extracted_bytes {
                    return Err(WorkspaceError::range(format!(
                        "Workspace archive exceeded {} extracted bytes",
                        limits.max_extracted_bytes
                    )));
                }
                let (mut out, path) = create_file_with(dest, trimmed, &mut known)
                    .map_err(|refused| refusal(refused, &text))?;
                let copied = io::copy(&mut entry, &mut out).map_err(validation)?;
                if copied != size {
                    return Err(validation(format!("entry \"{text}\" is truncated")));
                }
                let mtime = entry.header().mtime().unwrap_or(0);
                let _ = out.set_modified(UNIX_EPOCH + Duration::from_secs(mtime));
                out.set_permissions(fs::Permissions::from_mode(file_mode(mode)))
                    .map_err(|e| WorkspaceError::io(&e, "chmod", &path))?;
            }
            other => {
                return Err(WorkspaceError::error(format!(
                    "Workspace archive entry \"{text}\" has unsupported type \"{}\"",
                    type_name(other)
                )))
            }
        }
    }
    // The tar end marker is not the end of the gzip stream: read on, so a truncated or
    // corrupted trailer (CRC, length) is caught.
    io::copy(&mut tar.into_inner(), &mut io::sink()).map_err(validation)?;
    // Deepest first, so a read-only parent does not block its children's modes.
    for (path, mode) in directories.iter().rev() {
        let full = dest.join(path);
        fs::set_permissions(&full, fs::Permissions::from_mode(dir_mode(*mode)))
            .map_err(|e| WorkspaceError::io(&e, "chmod", &full))?;
    }
    Ok(())
}

fn refusal(refused: Refused, path: &str) -> WorkspaceError {
    match refused {
        Refused::Unsafe => unsafe_path(path),
        Refused::Io(error, at) => WorkspaceError::io(&error, "open", &at),
    }
}

/// Reads a whole small file (used by tests and folder manifests).
pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}
