//! Confined writes and reads against real directories, including the symlink-escape shapes:
//! nothing is ever written or read outside the root.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use aml_files::confined::{read_file, write_file, FsError, PathError};

/// A fresh directory with `root/` and `outside/`, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aml-fs-test-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("root")).unwrap();
        fs::create_dir_all(dir.join("outside")).unwrap();
        Scratch(dir)
    }
    fn root(&self) -> PathBuf {
        self.0.join("root")
    }
    fn outside(&self) -> PathBuf {
        self.0.join("outside")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn parent_error(result: Result<impl std::fmt::Debug, FsError>) -> String {
    match result {
        Err(FsError::ParentNotDirectory(segment)) => segment,
        other => panic!("expected a parent error, got {other:?}"),
    }
}

#[test]
fn writes_create_parents_and_leave_no_temporary_file() {
    let s = Scratch::new();
    write_file(&s.root(), "reports/2026/summary.md", b"Review completed.").unwrap();
    let dir = s.root().join("reports/2026");
    assert_eq!(
        fs::read_to_string(dir.join("summary.md")).unwrap(),
        "Review completed."
    );
    assert_eq!(entries(&dir), ["summary.md"]);
    // Replacing keeps one file with the new content; empty content is a file too.
    write_file(&s.root(), "reports/2026/summary.md", b"").unwrap();
    assert_eq!(fs::read(dir.join("summary.md")).unwrap(), b"");
    assert_eq!(entries(&dir), ["summary.md"]);
}

#[test]
fn a_root_reached_through_a_symlink_is_trusted() {
    let s = Scratch::new();
    let alias = s.0.join("alias");
    symlink(s.root(), &alias).unwrap();
    write_file(&alias, "a.txt", b"x").unwrap();
    assert_eq!(fs::read(s.root().join("a.txt")).unwrap(), b"x");
    assert_eq!(read_file(&alias, "a.txt").unwrap(), b"x");
}

#[test]
fn symlinked_parents_are_refused_wherever_they_point() {
    let s = Scratch::new();
    symlink(s.outside(), s.root().join("out")).unwrap();
    fs::create_dir(s.root().join("inner")).unwrap();
    symlink(s.root().join("inner"), s.root().join("alias")).unwrap();
    fs::create_dir(s.root().join("a")).unwrap();
    symlink("../../outside", s.root().join("a/up")).unwrap();
    assert_eq!(
        parent_error(write_file(&s.root(), "out/x.txt", b"x")),
        "out"
    );
    assert_eq!(
        parent_error(write_file(&s.root(), "alias/x.txt", b"x")),
        "alias"
    );
    assert_eq!(
        parent_error(write_file(&s.root(), "a/up/deep/x.txt", b"x")),
        "a/up"
    );
    assert_eq!(parent_error(read_file(&s.root(), "out/x.txt")), "out");
    assert!(
        entries(&s.outside()).is_empty(),
        "nothing written outside the root"
    );
    assert!(entries(&s.root().join("inner")).is_empty());
}

#[test]
fn non_directory_parents_are_refused() {
    let s = Scratch::new();
    fs::create_dir(s.root().join("a")).unwrap();
    fs::write(s.root().join("a/file"), b"keep").unwrap();
    assert_eq!(
        parent_error(write_file(&s.root(), "a/file/x.txt", b"x")),
        "a/file"
    );
    assert_eq!(fs::read(s.root().join("a/file")).unwrap(), b"keep");
}

#[test]
fn destinations_must_be_regular_files() {
    let s = Scratch::new();
    fs::write(s.outside().join("secret"), b"secret").unwrap();
    symlink(s.outside().join("secret"), s.root().join("link")).unwrap();
    symlink(s.outside().join("missing"), s.root().join("dangling")).unwrap();
    fs::create_dir(s.root().join("dir")).unwrap();
    for name in ["link", "dangling", "dir"] {
        assert!(
            matches!(
                write_file(&s.root(), name, b"x"),
                Err(FsError::NotRegularFile)
            ),
            "{name}"
        );
    }
    assert!(matches!(
        read_file(&s.root(), "link"),
        Err(FsError::NotRegularFile)
    ));
    assert!(matches!(
        read_file(&s.root(), "dir"),
        Err(FsError::NotRegularFile)
    ));
    assert_eq!(fs::read(s.outside().join("secret")).unwrap(), b"secret");
    assert_eq!(entries(&s.outside()), ["secret"]);
    assert_eq!(
        entries(&s.root()),
        ["dangling", "dir", "link"],
        "no temporary file left"
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let s = Scratch::new();
    let fifo =
        std::ffi::CString::new(s.root().join("pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `fifo` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert!(matches!(
        read_file(&s.root(), "pipe"),
        Err(FsError::NotRegularFile)
    ));
    assert!(matches!(
        write_file(&s.root(), "pipe", b"x"),
        Err(FsError::NotRegularFile)
    ));
}

#[test]
fn unconfined_paths_never_reach_the_filesystem() {
    let s = Scratch::new();
    let cases = [
        ("../outside/x", PathError::Traversal),
        ("a/../../outside/x", PathError::Traversal),
        ("/tmp/x", PathError::NotRelative),
        ("a\\..\\x", PathError::NotRelative),
        (".", PathError::NotAFile),
        ("a\0b", PathError::Nul),
    ];
    for (path, expected) in cases {
        match write_file(&s.root(), path, b"x") {
            Err(FsError::Path(e)) => assert_eq!(e, expected, "{path:?}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    assert!(entries(&s.root()).is_empty());
    assert!(entries(&s.outside()).is_empty());
}

#[test]
fn reads_report_missing_files_as_io_errors() {
    let s = Scratch::new();
    match read_file(&s.root(), "missing/x.txt") {
        Err(FsError::Io(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
            assert_eq!(aml_files::confined::errno_code(&e), Some("ENOENT"));
        }
        other => panic!("{other:?}"),
    }
    write_file(&s.root(), "docs/a.md", "héllo\n".as_bytes()).unwrap();
    assert_eq!(
        read_file(&s.root(), "docs/a.md").unwrap(),
        "héllo\n".as_bytes()
    );
}

#[test]
fn concurrent_replacements_never_tear_or_leave_temporary_files() {
    let s = Scratch::new();
    let root = s.root();
    let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
    std::thread::scope(|scope| {
        for content in &contents {
            let root = &root;
            scope.spawn(move || {
                for _ in 0..20 {
                    write_file(root, "shared/file.bin", content).unwrap();
                }
            });
        }
        // A reader sees one complete version at every moment.
        let root = &root;
        scope.spawn(move || {
            for _ in 0..200 {
                if let Ok(bytes) = read_file(root, "shared/file.bin") {
                    assert_eq!(bytes.len(), 64 * 1024);
                    assert!(
                        bytes.iter().all(|b| *b == bytes[0]),
                        "a torn write was observed"
                    );
                }
            }
        });
    });
    assert_eq!(entries(&root.join("shared")), ["file.bin"]);
}
