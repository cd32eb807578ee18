//! Profiling driver for docs/WORKSPACE-PERFORMANCE.md: save and load a tree through the
//! filesystem store without Node, so `perf record` sees only the engine and the kernel.
//! `cargo run --release -p aml-workspace --example workspace_profile -- <archive|folder>
//! <file size> <rounds> [files=3000]` prints medians. `KEEP=1` never releases (no deletion
//! between rounds), which isolates the cost of creating files where others were just deleted.
use std::path::PathBuf;
use std::time::Instant;

use aml_workspace::{
    FilesystemStorage, Format, LoadRequest, Materialization, PersistenceOptions, SaveRequest,
};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let format = Format::parse(args.get(1).map(String::as_str).unwrap_or("archive")).unwrap();
    let size: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let files: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(3000);
    let base = PathBuf::from(std::env::var("PROFILE_DIR").unwrap_or("/tmp".into()))
        .join(format!("aml-profile-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    let storage = FilesystemStorage::new(base.join("store"));
    let mut options = PersistenceOptions::new(base.clone());
    options.format = format;
    let lease = storage.open("bench", true).await.unwrap();
    let mut seed = Materialization::acquire(Box::new(lease), options.clone(), None)
        .await
        .unwrap();
    let mut body = vec![0u8; size];
    for (i, b) in body.iter_mut().enumerate() {
        *b = 32 + ((i * 7919) % 95) as u8;
    }
    for f in 0..files {
        let dir = seed.directory().join(format!("src/module-{}", f / 100));
        std::fs::create_dir_all(&dir).unwrap();
        body[..8].copy_from_slice(format!("{f:08}").as_bytes());
        std::fs::write(dir.join(format!("file-{f}.txt")), &body).unwrap();
    }
    let mut saves = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        seed.save(SaveRequest::default()).await.unwrap();
        saves.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    if std::env::var("KEEP").is_ok() {
        std::mem::forget(seed);
    } else {
        seed.release().await.unwrap();
    }
    let mut loads = Vec::new();
    let mut releases = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let lease = storage
            .open("bench", std::env::var("KEEP").is_err())
            .await
            .unwrap();
        let load = LoadRequest {
            revision: "current".into(),
            include: None,
            exclude: Vec::new(),
        };
        let mut m = Materialization::acquire(Box::new(lease), options.clone(), Some(load))
            .await
            .unwrap();
        loads.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        if std::env::var("KEEP").is_ok() {
            std::mem::forget(m);
            continue;
        }
        m.release().await.unwrap();
        releases.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        if v.is_empty() {
            0.0
        } else {
            v[v.len() / 2]
        }
    };
    println!(
        "{:?} {files} x {size}: save {:.1} ms, load {:.1} ms, release {:.1} ms",
        format,
        median(saves),
        median(loads),
        median(releases)
    );
    std::fs::remove_dir_all(&base).unwrap();
}
