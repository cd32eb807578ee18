//! Trusted application reads: `<Skill src>`, `<File src>` and `<Include src>` name a file
//! (or, for a Skill, a package directory) relative to `AmlRuntimeOptions.cwd`. The facade
//! resolves the path; this reads it with the same failures `node:fs` would report (the
//! syscall and errno travel to JS, which words them as Node does).

use std::fs;
use std::path::Path;

use crate::skill_package::{read_package, PackageSnapshot, ReadError};

/// What a `<Skill src>` named: a file's strict UTF-8 text, or a package directory.
#[derive(Debug)]
pub enum SkillSource {
    Text(String),
    Package(PackageSnapshot),
}

fn io<'a>(
    absolute: &'a str,
    syscall: &'static str,
) -> impl FnOnce(std::io::Error) -> ReadError + 'a {
    move |error| ReadError::Io {
        display: absolute.into(),
        real: absolute.into(),
        syscall,
        error,
    }
}

/// The whole file at `absolute`, as `fs.readFile` reads it: opening a directory succeeds
/// and reading it fails (`EISDIR`, syscall "read").
pub fn read_source_file(
    absolute: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    if cancelled() {
        return Err(ReadError::Cancelled);
    }
    let mut file = fs::File::open(absolute).map_err(io(absolute, "open"))?;
    let mut content = Vec::new();
    file.read_to_end(&mut content)
        .map_err(io(absolute, "read"))?;
    if cancelled() {
        return Err(ReadError::Cancelled);
    }
    Ok(content)
}

/// `<Skill src>`: a directory is a package (see `skill_package.rs`); anything else is read
/// as the file form, whose text must be strict UTF-8 (a byte order mark is kept).
pub fn read_skill_source(
    absolute: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<SkillSource, ReadError> {
    if cancelled() {
        return Err(ReadError::Cancelled);
    }
    // `stat`, not `lstat`: a link to a package directory is a package.
    let info = fs::metadata(Path::new(absolute)).map_err(io(absolute, "stat"))?;
    if info.is_dir() {
        return read_package(absolute, cancelled).map(SkillSource::Package);
    }
    let bytes = read_source_file(absolute, cancelled)?;
    String::from_utf8(bytes)
        .map(SkillSource::Text)
        .map_err(|_| ReadError::Utf8 {
            display: absolute.into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory, removed when the guard drops.
    fn dir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("aml-source-read-")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn a_file_keeps_its_byte_order_mark_and_bad_utf8_is_refused() {
        let dir = dir();
        let root = dir.path();
        let good = root.join("good.md");
        fs::write(&good, "\u{feff}hello").unwrap();
        match read_skill_source(good.to_str().unwrap(), &|| false).unwrap() {
            SkillSource::Text(text) => assert_eq!(text, "\u{feff}hello"),
            other => panic!("expected text, got {other:?}"),
        }
        let bad = root.join("latin1.md");
        fs::write(&bad, [0x63, 0x61, 0x66, 0xe9]).unwrap();
        let error = read_skill_source(bad.to_str().unwrap(), &|| false).unwrap_err();
        assert!(matches!(error, ReadError::Utf8 { display } if display == bad.to_str().unwrap()));
    }

    #[test]
    fn failures_carry_the_syscall_node_would_name() {
        let dir = dir();
        let root = dir.path();
        let missing = root.join("missing.md");
        let error = read_skill_source(missing.to_str().unwrap(), &|| false).unwrap_err();
        assert!(
            matches!(&error, ReadError::Io { syscall: "stat", error, .. } if error.raw_os_error() == Some(2))
        );
        let error = read_source_file(missing.to_str().unwrap(), &|| false).unwrap_err();
        assert!(matches!(
            &error,
            ReadError::Io {
                syscall: "open",
                ..
            }
        ));
        let error = read_source_file(root.to_str().unwrap(), &|| false).unwrap_err();
        assert!(
            matches!(&error, ReadError::Io { syscall: "read", error, .. } if error.raw_os_error() == Some(21))
        );
    }

    #[test]
    fn a_cancelled_read_stops_before_touching_the_file() {
        let error = read_source_file("/nonexistent/never-opened", &|| true).unwrap_err();
        assert!(matches!(error, ReadError::Cancelled));
    }
}
