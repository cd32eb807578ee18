//! Reading `<Skill src>` when it names a package directory: one complete, bounded snapshot
//! taken once, so the Agent later gets exactly what was checked (docs/SKILL.md). Every file
//! is read with a bound (never whole and then measured), so a file that is or grows larger
//! than the remaining budget costs at most the budget plus one byte.
//!
//! "Its root" is the package directory after resolving links in `src`: every entry must lie
//! inside it. A link that resolves outside is refused, as are links to directories (no
//! cycles to chase), sockets, FIFOs and devices; links to files inside are read as copies.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::skill_manifest::parse_skill_manifest;

/// Bounds of one package: entries (files, directories, links) and total file bytes.
pub const MAX_PACKAGE_ENTRIES: usize = 1000;
pub const MAX_PACKAGE_BYTES: u64 = 16 * 1024 * 1024;

/// One file of a snapshot: its package-relative path ("/"-separated) and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedFile {
    pub rel: PathBuf,
    pub content: Vec<u8>,
    pub executable: bool,
}

/// A package read completely: its SKILL.md identity, directories (parents first) and files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSnapshot {
    pub name: String,
    pub description: String,
    pub dirs: Vec<PathBuf>,
    pub files: Vec<StagedFile>,
}

/// Why a package could not be read. `Io` and `Utf8` become
/// `<Skill> could not read local file "<display>"` (with the fs error or a TypeError as the
/// cause); `Evaluation` is a complete EvaluationError message.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{syscall} {}: {error}", real.display())]
    Io {
        /// The path as the application named it (`src` resolved, links not resolved).
        display: String,
        /// The path the failing call used.
        real: PathBuf,
        syscall: &'static str,
        error: io::Error,
    },
    #[error("{display} is not valid UTF-8")]
    Utf8 { display: String },
    #[error("{0}")]
    Evaluation(String),
    #[error("cancelled")]
    Cancelled,
}

fn io_error(
    display: String,
    real: &Path,
    syscall: &'static str,
) -> impl FnOnce(io::Error) -> ReadError {
    let real = real.to_path_buf();
    move |error| ReadError::Io {
        display,
        real,
        syscall,
        error,
    }
}

/// Reads the package directory `absolute` (already resolved from the application's cwd).
/// `cancelled` is polled before each file-system step; once it answers true the read stops
/// with [`ReadError::Cancelled`].
pub fn read_package(
    absolute: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<PackageSnapshot, ReadError> {
    let check = || {
        if cancelled() {
            Err(ReadError::Cancelled)
        } else {
            Ok(())
        }
    };
    check()?;
    let root = fs::canonicalize(absolute).map_err(io_error(
        absolute.into(),
        Path::new(absolute),
        "realpath",
    ))?;
    let manifest_display = format!("{absolute}/SKILL.md");
    let manifest_real = root.join("SKILL.md");
    let manifest_is_file = match fs::metadata(&manifest_real) {
        Ok(info) => info.is_file(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => false,
        Err(error) => return Err(io_error(manifest_display, &manifest_real, "stat")(error)),
    };
    if !manifest_is_file {
        return Err(ReadError::Evaluation(format!(
            "<Skill> src directory \"{absolute}\" must contain a SKILL.md file"
        )));
    }
    let (dirs, files) = walk(absolute, &root, &check)?;
    let manifest = files
        .iter()
        .find(|file| file.rel == Path::new("SKILL.md"))
        .ok_or_else(|| {
            ReadError::Evaluation(format!(
                "<Skill> src directory \"{absolute}\" must contain a SKILL.md file"
            ))
        })?;
    let text = std::str::from_utf8(&manifest.content).map_err(|_| ReadError::Utf8 {
        display: manifest_display,
    })?;
    let parsed = parse_skill_manifest(text).map_err(|problem| {
        ReadError::Evaluation(format!(
            "<Skill> package \"{absolute}\" has an invalid SKILL.md: {problem}"
        ))
    })?;
    Ok(PackageSnapshot {
        name: parsed.name,
        description: parsed.description,
        dirs,
        files,
    })
}

/// JS orders names by UTF-16 code units (`a.name < b.name`); so does this.
fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

type Walked = (Vec<PathBuf>, Vec<StagedFile>);

/// Breadth-first (parents before children), in sorted name order, within the bounds.
fn walk(
    absolute: &str,
    root: &Path,
    check: &dyn Fn() -> Result<(), ReadError>,
) -> Result<Walked, ReadError> {
    let fail = |message: String| {
        ReadError::Evaluation(format!("<Skill> package \"{absolute}\" {message}"))
    };
    let not_a_file = |rel: &str| {
        fail(format!(
            "entry \"{rel}\" must be a regular file, a directory, or a link to a file in the package"
        ))
    };
    let display = |rel: &str| {
        if rel.is_empty() {
            absolute.to_string()
        } else {
            format!("{absolute}/{rel}")
        }
    };
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    let mut entries = 0usize;
    let mut bytes = 0u64;
    let mut queue: VecDeque<(String, PathBuf)> = VecDeque::from([(String::new(), PathBuf::new())]);
    while let Some((dir, dir_path)) = queue.pop_front() {
        check()?;
        let real_dir = root.join(&dir_path);
        let listing =
            fs::read_dir(&real_dir).map_err(io_error(display(&dir), &real_dir, "scandir"))?;
        let mut listing: Vec<fs::DirEntry> = listing
            .collect::<Result<_, _>>()
            .map_err(io_error(display(&dir), &real_dir, "scandir"))?;
        let mut named: Vec<(String, fs::DirEntry)> = listing
            .drain(..)
            .map(|entry| (entry.file_name().to_string_lossy().into_owned(), entry))
            .collect();
        named.sort_by(|a, b| utf16_order(&a.0, &b.0));
        for (name, entry) in named {
            check()?;
            entries += 1;
            if entries > MAX_PACKAGE_ENTRIES {
                return Err(fail(format!("has more than {MAX_PACKAGE_ENTRIES} entries")));
            }
            // Relative paths use "/" in messages and in the staged tree alike.
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let rel_path = dir_path.join(entry.file_name());
            let mut source = root.join(&rel_path);
            let kind = entry
                .file_type()
                .map_err(io_error(display(&rel), &source, "lstat"))?;
            if kind.is_dir() {
                dirs.push(rel_path.clone());
                queue.push_back((rel, rel_path));
                continue;
            }
            if kind.is_symlink() {
                source = fs::canonicalize(&source).map_err(io_error(
                    display(&rel),
                    &source,
                    "realpath",
                ))?;
                if !source.starts_with(root) {
                    return Err(fail(format!("entry \"{rel}\" links outside the package")));
                }
            } else if !kind.is_file() {
                return Err(not_a_file(&rel));
            }
            let info = fs::metadata(&source).map_err(io_error(display(&rel), &source, "stat"))?;
            if !info.is_file() {
                return Err(not_a_file(&rel));
            }
            // Checked before reading (from the size) and while reading (it may have grown).
            let too_large = || fail(format!("is larger than {MAX_PACKAGE_BYTES} bytes"));
            if bytes + info.len() > MAX_PACKAGE_BYTES {
                return Err(too_large());
            }
            let content = read_bounded(&source, MAX_PACKAGE_BYTES - bytes + 1)
                .map_err(io_error(display(&rel), &source, "read"))?;
            bytes += content.len() as u64;
            if bytes > MAX_PACKAGE_BYTES {
                return Err(too_large());
            }
            files.push(StagedFile {
                rel: rel_path,
                content,
                executable: info.permissions().mode() & 0o111 != 0,
            });
        }
    }
    Ok((dirs, files))
}

/// At most `limit` bytes of the file at `path`.
fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let mut content = Vec::new();
    file.take(limit).read_to_end(&mut content)?;
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let path = std::env::temp_dir().join(format!("aml-files-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(&path).unwrap();
            Dir(fs::canonicalize(path).unwrap())
        }

        fn write(&self, rel: &str, content: &[u8]) {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }

        fn text(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const MANIFEST: &[u8] = b"---\nname: review\ndescription: Review\n  things.\n---\nbody\n";
    const NEVER: &dyn Fn() -> bool = &|| false;

    fn message(result: Result<PackageSnapshot, ReadError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn reads_breadth_first_in_order_with_modes_and_link_copies() {
        let dir = Dir::new("read");
        dir.write("SKILL.md", MANIFEST);
        dir.write("b/deep/x.txt", b"x");
        dir.write("a.sh", b"#!/bin/sh\n");
        fs::set_permissions(dir.0.join("a.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("a.sh", dir.0.join("alias")).unwrap();
        let snapshot = read_package(dir.text(), NEVER).unwrap();
        assert_eq!(
            (snapshot.name.as_str(), snapshot.description.as_str()),
            ("review", "Review things.")
        );
        assert_eq!(
            snapshot.dirs,
            vec![PathBuf::from("b"), PathBuf::from("b/deep")]
        );
        let files: Vec<(String, bool)> = snapshot
            .files
            .iter()
            .map(|f| (f.rel.to_string_lossy().into_owned(), f.executable))
            .collect();
        assert_eq!(
            files,
            vec![
                ("SKILL.md".into(), false),
                ("a.sh".into(), true),
                ("alias".into(), true),
                ("b/deep/x.txt".into(), false)
            ]
        );
        assert_eq!(snapshot.files[2].content, b"#!/bin/sh\n");
    }

    #[test]
    fn refuses_what_leaves_the_package_and_special_files() {
        let dir = Dir::new("refuse");
        let outside = Dir::new("refuse-outside");
        outside.write("secret", b"s");
        dir.write("SKILL.md", MANIFEST);
        symlink(outside.0.join("secret"), dir.0.join("leak")).unwrap();
        let abs = dir.text();
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> package \"{abs}\" entry \"leak\" links outside the package")
        );
        fs::remove_file(dir.0.join("leak")).unwrap();
        symlink(".", dir.0.join("self")).unwrap();
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> package \"{abs}\" entry \"self\" must be a regular file, a directory, or a link to a file in the package")
        );
    }

    #[test]
    fn enforces_the_bounds_without_reading_whole_files() {
        let dir = Dir::new("bounds");
        dir.write("SKILL.md", MANIFEST);
        let big = fs::File::create(dir.0.join("big")).unwrap();
        big.set_len(MAX_PACKAGE_BYTES + 1).unwrap();
        let abs = dir.text();
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> package \"{abs}\" is larger than 16777216 bytes")
        );
        assert_eq!(read_bounded(&dir.0.join("big"), 10).unwrap().len(), 10);
        fs::remove_file(dir.0.join("big")).unwrap();
        for i in 0..MAX_PACKAGE_ENTRIES {
            dir.write(&format!("f{i}"), b"");
        }
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> package \"{abs}\" has more than 1000 entries")
        );
    }

    #[test]
    fn manifest_problems_missing_files_and_cancellation() {
        let dir = Dir::new("manifest");
        let abs = dir.text();
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> src directory \"{abs}\" must contain a SKILL.md file")
        );
        dir.write("SKILL.md", b"# Title");
        assert_eq!(
            message(read_package(abs, NEVER)),
            format!("<Skill> package \"{abs}\" has an invalid SKILL.md: it must start with YAML frontmatter (---)")
        );
        dir.write("SKILL.md", &[0xff, 0xfe]);
        assert!(
            matches!(read_package(abs, NEVER), Err(ReadError::Utf8 { display }) if display == format!("{abs}/SKILL.md"))
        );
        let missing = format!("{abs}/missing");
        assert!(matches!(
            read_package(&missing, NEVER),
            Err(ReadError::Io { syscall: "realpath", ref error, .. }) if error.kind() == io::ErrorKind::NotFound
        ));
        dir.write("SKILL.md", MANIFEST);
        assert!(matches!(
            read_package(abs, &|| true),
            Err(ReadError::Cancelled)
        ));
    }
}
