//! Hostile revisions: every classic tar traversal shape, archive bombs, hostile folder
//! manifests, corrupt or truncated data. Each must fail with a clear error naming the entry,
//! write nothing outside the materialization, and leave no temporary root behind.
mod support;

use std::fs;
use std::io::Write;

use aml_workspace::{ErrorClass, Format, LoadRequest};
use flate2::write::GzEncoder;
use support::*;

fn header(name: &[u8], kind: u8, size: usize, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = kind;
    h[157..157 + link.len()].copy_from_slice(link);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

struct Tar(Vec<u8>);

impl Tar {
    fn new() -> Self {
        Tar(Vec::new())
    }
    fn entry(mut self, name: &[u8], kind: u8, body: &[u8], link: &[u8]) -> Self {
        self.0
            .extend_from_slice(&header(name, kind, body.len(), link));
        self.0.extend_from_slice(body);
        self.0.resize(self.0.len().div_ceil(512) * 512, 0);
        self
    }
    fn file(self, name: &str, body: &str) -> Self {
        self.entry(name.as_bytes(), b'0', body.as_bytes(), b"")
    }
    fn pax_path(self, path: &[u8]) -> Self {
        let mut record = b" path=".to_vec();
        record.extend_from_slice(path);
        record.push(b'\n');
        let mut len = record.len() + 2;
        if (len.to_string().len() + record.len()) != len {
            len = len.to_string().len() + record.len();
        }
        let mut body = len.to_string().into_bytes();
        body.extend_from_slice(&record);
        self.entry(b"PaxHeader", b'x', &body, b"")
    }
    fn gzip(mut self) -> Vec<u8> {
        self.0.extend_from_slice(&[0u8; 1024]);
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&self.0).unwrap();
        gz.finish().unwrap()
    }
}

const INDEX: &str = r#"{"version":1,"current":"r1","revisions":[{"createdAt":"2026-01-01T00:00:00.000Z","format":"FORMAT","id":"r1","path":"PATH"}]}"#;

fn plant(fx: &Fixture, format: Format) -> std::path::PathBuf {
    let seg = fx.segment("w");
    fs::create_dir_all(seg.join("revisions")).unwrap();
    let path = format.revision_path("r1");
    fs::write(
        seg.join("workspace.json"),
        INDEX
            .replace("FORMAT", format.as_str())
            .replace("PATH", &path),
    )
    .unwrap();
    seg
}

async fn restore_error(fx: &Fixture, format: Format) -> aml_workspace::WorkspaceError {
    let outside = fx.dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let error = match fx.open("w", format, current(), true).await {
        Ok(_) => panic!("the hostile revision was restored"),
        Err(error) => error,
    };
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
    assert_eq!(
        fs::read_dir(fx.tmp()).unwrap().count(),
        0,
        "the temporary root is removed"
    );
    assert!(
        !fx.segment("w").with_extension("lock").exists()
            || !fx.dir.path().join("store/w.lock").exists(),
        "the lock is released"
    );
    error
}

async fn archive_error(tar: Tar) -> String {
    let fx = Fixture::new();
    let seg = plant(&fx, Format::Archive);
    fs::write(seg.join("revisions/r1.tar.gz"), tar.gzip()).unwrap();
    restore_error(&fx, Format::Archive).await.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traversal_shapes_name_the_entry() {
    assert_eq!(
        archive_error(Tar::new().file("../outside/evil.txt", "x")).await,
        "Workspace archive contains unsafe path \"../outside/evil.txt\""
    );
    assert_eq!(
        archive_error(Tar::new().file("a/../../outside/e", "x")).await,
        "Workspace archive contains unsafe path \"a/../../outside/e\""
    );
    let fx = Fixture::new();
    let absolute = format!("{}/outside/abs.txt", fx.dir.path().display());
    assert_eq!(
        archive_error(Tar::new().file(&absolute, "x")).await,
        format!("Workspace archive contains unsafe path \"{absolute}\"")
    );
    let symlink_then_file = Tar::new()
        .entry(b"link", b'2', b"", b"../outside")
        .file("link/x", "x");
    assert_eq!(
        archive_error(symlink_then_file).await,
        "Workspace archive entry \"link\" has unsupported type \"SymbolicLink\""
    );
    let dir_then_symlink =
        Tar::new()
            .entry(b"d/", b'5', b"", b"")
            .entry(b"d", b'2', b"", b"../outside");
    assert_eq!(
        archive_error(dir_then_symlink).await,
        "Workspace archive entry \"d\" has unsupported type \"SymbolicLink\""
    );
    let hardlink = Tar::new().entry(b"h", b'1', b"", b"/etc/passwd");
    assert_eq!(
        archive_error(hardlink).await,
        "Workspace archive entry \"h\" has unsupported type \"Link\""
    );
    let device = Tar::new().entry(b"dev", b'3', b"", b"");
    assert_eq!(
        archive_error(device).await,
        "Workspace archive entry \"dev\" has unsupported type \"CharacterDevice\""
    );
    let nul = Tar::new().pax_path(b"a\0b").file("placeholder", "x");
    assert_eq!(
        archive_error(nul).await,
        "Workspace archive contains unsafe path \"a\0b\""
    );
    let long = "n".repeat(300);
    let mut name = long.clone().into_bytes();
    name.push(0);
    let overlong = Tar::new()
        .entry(b"././@LongLink", b'L', &name, b"")
        .file("short", "x");
    assert_eq!(
        archive_error(overlong).await,
        format!("Workspace archive contains unsafe path \"{long}\"")
    );
    let duplicate = Tar::new().file("a", "1").file("a", "2");
    assert_eq!(
        archive_error(duplicate).await,
        "Workspace archive contains unsafe path \"a\""
    );
    let file_as_parent = Tar::new().file("a", "1").file("a/b", "2");
    assert_eq!(
        archive_error(file_as_parent).await,
        "Workspace archive contains unsafe path \"a/b\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_bombs_stop_at_the_limits() {
    let fx = Fixture::new();
    let seg = plant(&fx, Format::Archive);
    let mut many = Tar::new();
    for i in 0..5 {
        many = many.file(&format!("f{i}"), "x");
    }
    fs::write(seg.join("revisions/r1.tar.gz"), many.gzip()).unwrap();
    let lease = {
        use aml_workspace::StorageAdapter;
        fx.storage()
            .acquire(aml_workspace::AcquireRequest {
                evaluation_id: "e".into(),
                id: "w".into(),
                lock: false,
            })
            .await
            .unwrap()
    };
    let mut options = fx.options(Format::Archive);
    options.max_entries = 4;
    let error = aml_workspace::Materialization::acquire(lease, options, current())
        .await
        .err()
        .unwrap();
    assert_eq!(
        (error.class, error.message.as_str()),
        (
            ErrorClass::RangeError,
            "Workspace archive exceeded 4 entries"
        )
    );

    // 64 MiB of zeros compresses to ~64 KiB: the extracted-bytes limit stops it early.
    let bomb = Tar::new().entry(b"zeros", b'0', &vec![0u8; 64 << 20], b"");
    fs::write(seg.join("revisions/r1.tar.gz"), bomb.gzip()).unwrap();
    let lease = {
        use aml_workspace::StorageAdapter;
        fx.storage()
            .acquire(aml_workspace::AcquireRequest {
                evaluation_id: "e".into(),
                id: "w".into(),
                lock: false,
            })
            .await
            .unwrap()
    };
    let mut options = fx.options(Format::Archive);
    options.max_extracted_bytes = 1 << 20;
    options.max_archive_bytes = 1 << 20;
    let error = aml_workspace::Materialization::acquire(lease, options.clone(), current())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.message,
        "Workspace archive exceeded 1048576 extracted bytes"
    );
    options.max_archive_bytes = 1000;
    let lease = {
        use aml_workspace::StorageAdapter;
        fx.storage()
            .acquire(aml_workspace::AcquireRequest {
                evaluation_id: "e".into(),
                id: "w".into(),
                lock: false,
            })
            .await
            .unwrap()
    };
    let error = aml_workspace::Materialization::acquire(lease, options, current())
        .await
        .err()
        .unwrap();
    assert_eq!(error.message, "Workspace archive exceeded 1000 bytes");
    assert_eq!(fs::read_dir(fx.tmp()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_and_truncated_archives_fail_cleanly() {
    let fx = Fixture::new();
    let mut ws = fx
        .open("w", Format::Archive, current(), true)
        .await
        .unwrap();
    write(ws.directory(), "a.txt", &"payload ".repeat(5000));
    ws.save(save_all()).await.unwrap();
    ws.release().await.unwrap();
    let seg = fx.segment("w");
    let index = fs::read_to_string(seg.join("workspace.json")).unwrap();
    let archive = fs::read_dir(seg.join("revisions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let good = fs::read(&archive).unwrap();
    for broken in [
        good[..good.len() / 2].to_vec(),
        good[..good.len() - 4].to_vec(),
        b"not gzip at all".to_vec(),
    ] {
        fs::write(&archive, &broken).unwrap();
        let error = restore_error(&fx, Format::Archive).await;
        assert_eq!(error.message, "Workspace archive validation failed");
        assert!(error.cause.is_some());
        assert_eq!(
            fs::read_to_string(seg.join("workspace.json")).unwrap(),
            index,
            "the index is untouched"
        );
    }
    fs::write(&archive, &good).unwrap();
    let mut ws = fx
        .open("w", Format::Archive, current(), true)
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(ws.directory().join("a.txt"))
            .unwrap()
            .len(),
        40000
    );
    ws.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_indexes_fail_cleanly() {
    let fx = Fixture::new();
    let seg = fx.segment("w");
    fs::create_dir_all(&seg).unwrap();
    for (body, message) in [
        ("{\"version\":1,", "Workspace index is not valid JSON"),
        (
            "{\"version\":1,\"current\":\"x\",\"revisions\":{}}",
            "Workspace index is invalid",
        ),
        ("", "Workspace index is not valid JSON"),
    ] {
        fs::write(seg.join("workspace.json"), body).unwrap();
        assert_eq!(restore_error(&fx, Format::Archive).await.message, message);
    }
    fs::write(seg.join("workspace.json"), vec![b' '; 4 * 1024 * 1024 + 1]).unwrap();
    let error = restore_error(&fx, Format::Archive).await;
    assert_eq!(
        (error.class, error.message.as_str()),
        (
            ErrorClass::RangeError,
            "Workspace index exceeded 4194304 bytes"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_revisions_are_errors_not_fresh_starts() {
    let fx = Fixture::new();
    plant(&fx, Format::Archive);
    assert_eq!(
        restore_error(&fx, Format::Archive).await.message,
        "Workspace archive revision \"r1\" does not exist"
    );
    let named = Some(LoadRequest {
        revision: "nope".into(),
        include: None,
        exclude: vec![],
    });
    let error = fx
        .open("w", Format::Archive, named.clone(), false)
        .await
        .err()
        .unwrap();
    assert_eq!(error.message, "Workspace revision \"nope\" does not exist");
    let error = fx
        .open("fresh", Format::Archive, named, false)
        .await
        .err()
        .unwrap();
    assert_eq!(error.message, "Workspace revision \"nope\" does not exist");
    let mut fresh = fx
        .open("fresh", Format::Archive, current(), false)
        .await
        .unwrap();
    assert_eq!(fs::read_dir(fresh.directory()).unwrap().count(), 0);
    fresh.release().await.unwrap();
}

async fn folder_error(manifest: Option<&str>, files: &[(&str, &str)]) -> String {
    let fx = Fixture::new();
    let seg = plant(&fx, Format::Folder);
    let base = seg.join("revisions/r1");
    fs::create_dir_all(base.join("files")).unwrap();
    if let Some(manifest) = manifest {
        fs::write(base.join("manifest.json"), manifest).unwrap();
    }
    for (path, body) in files {
        write(&base.join("files"), path, body);
    }
    restore_error(&fx, Format::Folder).await.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_and_broken_folder_revisions() {
    let entry = |path: &str, size: u64| {
        format!(
            r#"{{"entries":[{{"mode":420,"path":"{path}","size":{size},"type":"file"}}],"version":1}}"#
        )
    };
    assert_eq!(
        folder_error(Some(&entry("../outside/x", 1)), &[]).await,
        "Workspace snapshot contains unsafe path \"../outside/x\""
    );
    assert_eq!(
        folder_error(Some(&entry("/abs", 1)), &[]).await,
        "Workspace snapshot contains unsafe path \"/abs\""
    );
    assert_eq!(
        folder_error(None, &[]).await,
        "Workspace folder revision is missing its manifest"
    );
    assert_eq!(
        folder_error(Some("{"), &[]).await,
        "Workspace folder manifest is not valid JSON"
    );
    assert_eq!(
        folder_error(Some(r#"{"entries":[],"version":2}"#), &[]).await,
        "Workspace folder manifest is invalid"
    );
    assert_eq!(
        folder_error(Some(r#"{"entries":[{"path":"a"}],"version":1}"#), &[]).await,
        "Workspace folder manifest contains an invalid entry"
    );
    let dup = r#"{"entries":[{"mode":420,"path":"a","size":0,"type":"file"},{"mode":420,"path":"a","size":0,"type":"file"}],"version":1}"#;
    assert_eq!(
        folder_error(Some(dup), &[("a", "")]).await,
        "Workspace folder manifest contains duplicate path \"a\""
    );
    assert_eq!(
        folder_error(Some(&entry("a", 1)), &[]).await,
        "Workspace folder revision is missing \"a\""
    );
    assert_eq!(
        folder_error(Some(&entry("a", 1)), &[("a", "too long")]).await,
        "Workspace folder entry \"a\" has an unexpected size"
    );
    let under_file = r#"{"entries":[{"mode":420,"path":"a","size":1,"type":"file"},{"mode":420,"path":"a/b","size":1,"type":"file"}],"version":1}"#;
    let message = folder_error(Some(under_file), &[("a", "1")]).await;
    assert!(
        message == "Workspace snapshot contains unsafe path \"a/b\""
            || message == "Workspace folder revision is missing \"a/b\"",
        "{message}"
    );
}
