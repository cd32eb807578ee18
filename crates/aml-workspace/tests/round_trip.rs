//! Save and restore through the filesystem store, both formats.
mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use aml_workspace::{Format, LoadRequest, SaveRequest};
use support::*;

async fn round_trip(format: Format) {
    let fx = Fixture::new();
    let mut first = fx.open("review-42", format, current(), true).await.unwrap();
    assert!(first.revision_id().is_none());
    let dir = first.directory().to_path_buf();
    write(&dir, "a.txt", "alpha");
    write(&dir, ".env", "dot");
    write(&dir, "src/deep/b.rs", "beta");
    fs::create_dir_all(dir.join("empty/inner")).unwrap();
    fs::set_permissions(dir.join("a.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    let expected = tree(&dir);
    let revision = first.save(save_all()).await.unwrap();
    first.release().await.unwrap();
    assert!(!dir.exists(), "release removes the materialization");

    let mut second = fx
        .open("review-42", Format::Archive, current(), true)
        .await
        .unwrap();
    assert_eq!(second.revision_id(), Some(revision.id.as_str()));
    assert_eq!(tree(second.directory()), expected);
    let mode = fs::metadata(second.directory().join("a.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    second.release().await.unwrap();

    let index = fs::read_to_string(fx.segment("review-42").join("workspace.json")).unwrap();
    assert!(index.contains(&format!("\"format\":\"{}\"", format.as_str())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_round_trip() {
    round_trip(Format::Archive).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_round_trip() {
    round_trip(Format::Folder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folder_layout_and_manifest() {
    let fx = Fixture::new();
    let mut ws = fx.open("f", Format::Folder, None, false).await.unwrap();
    write(ws.directory(), "x/y.txt", "yy");
    let revision = ws.save(save_all()).await.unwrap();
    ws.release().await.unwrap();
    let base = fx.segment("f").join(format!("revisions/{}", revision.id));
    assert_eq!(
        fs::read_to_string(base.join("files/x/y.txt")).unwrap(),
        "yy"
    );
    let manifest = fs::read_to_string(base.join("manifest.json")).unwrap();
    assert_eq!(
        manifest,
        r#"{"entries":[{"mode":493,"path":"x","size":0,"type":"directory"},{"mode":420,"path":"x/y.txt","size":2,"type":"file"}],"version":1}"#
    );
    assert_eq!(revision.path, format!("revisions/{}/", revision.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selection_rules() {
    let fx = Fixture::new();
    let mut ws = fx.open("s", Format::Archive, None, false).await.unwrap();
    let dir = ws.directory().to_path_buf();
    write(&dir, ".gitignore", "*.log\nbuild/\n");
    write(&dir, "keep.txt", "k");
    write(&dir, "debug.log", "l");
    write(&dir, "build/out.js", "o");
    write(&dir, "reports/a.md", "a");
    write(&dir, "reports/a.tmp", "t");
    write(&dir, "node_modules/x/index.js", "n");
    let gitignored = SaveRequest {
        include: None,
        exclude: vec!["**/node_modules/**".into()],
        gitignore: true,
        retention: 5,
    };
    let first = ws.save(gitignored).await.unwrap();
    let included = SaveRequest {
        include: Some(vec!["reports/**".into(), "*.log".into()]),
        exclude: vec!["reports/**/*.tmp".into()],
        gitignore: true,
        retention: 5,
    };
    let second = ws.save(included).await.unwrap();
    ws.release().await.unwrap();

    let load = |revision: &str| {
        Some(LoadRequest {
            revision: revision.into(),
            include: None,
            exclude: vec![],
        })
    };
    let mut a = fx
        .open("s", Format::Archive, load(&first.id), false)
        .await
        .unwrap();
    let names: Vec<String> = tree(a.directory()).into_iter().map(|e| e.0).collect();
    // Directories holding only excluded entries are not recorded.
    assert_eq!(
        names,
        [
            ".gitignore",
            "keep.txt",
            "reports",
            "reports/a.md",
            "reports/a.tmp"
        ]
    );
    a.release().await.unwrap();
    let mut b = fx
        .open("s", Format::Archive, load(&second.id), false)
        .await
        .unwrap();
    let names: Vec<String> = tree(b.directory()).into_iter().map(|e| e.0).collect();
    assert_eq!(
        names,
        ["debug.log", "reports", "reports/a.md"],
        "explicit includes override .gitignore; excludes win"
    );
    b.release().await.unwrap();

    // Load include/exclude select from the restored revision.
    let narrowed = Some(LoadRequest {
        revision: first.id.clone(),
        include: Some(vec!["reports/**".into()]),
        exclude: vec!["**/*.tmp".into()],
    });
    let mut c = fx
        .open("s", Format::Archive, narrowed, false)
        .await
        .unwrap();
    let names: Vec<String> = tree(c.directory()).into_iter().map(|e| e.0).collect();
    assert_eq!(names, ["reports", "reports/a.md"]);
    c.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinks_and_special_files_are_rejected() {
    let fx = Fixture::new();
    let mut ws = fx.open("l", Format::Archive, None, false).await.unwrap();
    let dir = ws.directory().to_path_buf();
    write(&dir, "real.txt", "r");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();
    let error = ws.save(save_all()).await.unwrap_err();
    assert_eq!(
        error.message,
        "Workspace selection contains unsupported symbolic link \"link\""
    );
    // An excluded link is fine.
    let excluded = SaveRequest {
        exclude: vec!["link".into()],
        ..save_all()
    };
    ws.save(excluded).await.unwrap();
    fs::remove_file(dir.join("link")).unwrap();
    let fifo = std::ffi::CString::new(dir.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let error = ws.save(save_all()).await.unwrap_err();
    assert_eq!(
        error.message,
        "Workspace selection contains unsupported entry \"pipe\""
    );
    ws.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_limits() {
    let fx = Fixture::new();
    let lease = {
        use aml_workspace::StorageAdapter;
        fx.storage()
            .acquire(aml_workspace::AcquireRequest {
                evaluation_id: "e".into(),
                id: "m".into(),
                lock: false,
            })
            .await
            .unwrap()
    };
    let mut options = fx.options(Format::Archive);
    // Two files and the archive's root entry.
    options.max_entries = 3;
    options.max_extracted_bytes = 10;
    let mut ws = aml_workspace::Materialization::acquire(lease, options, None)
        .await
        .unwrap();
    write(ws.directory(), "a", "12345");
    write(ws.directory(), "b", "12345");
    ws.save(save_all()).await.unwrap();
    write(ws.directory(), "c", "");
    let error = ws.save(save_all()).await.unwrap_err();
    assert_eq!(
        (error.class.clone(), error.message.as_str()),
        (
            aml_workspace::ErrorClass::RangeError,
            "Workspace snapshot exceeded 3 entries"
        )
    );
    fs::remove_file(ws.directory().join("c")).unwrap();
    write(ws.directory(), "b", "123456");
    let error = ws.save(save_all()).await.unwrap_err();
    assert_eq!(error.message, "Workspace snapshot exceeded 10 bytes");
    ws.release().await.unwrap();
}
