//! Confined access beneath a Sandbox root (`write_file_beneath`, `read_file_beneath`): the
//! session root may pass through links that stay beneath the lease's host directory, never
//! out of it; and a parent swapped for a link to outside (`renameat2(RENAME_EXCHANGE)` in a
//! loop) never redirects a write or a read.

use std::ffi::CString;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use aml_files::confined::{read_file_beneath, write_file_beneath, FsError};

struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aml-beneath-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("base")).unwrap();
        fs::create_dir_all(dir.join("outside")).unwrap();
        Scratch(dir)
    }
    fn base(&self) -> PathBuf {
        self.0.join("base")
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

#[test]
fn a_session_root_may_follow_links_beneath_the_base_only() {
    let s = Scratch::new();
    fs::create_dir_all(s.base().join("real")).unwrap();
    symlink("real", s.base().join("alias")).unwrap();
    symlink(s.outside(), s.base().join("away")).unwrap();
    write_file_beneath(&s.base(), "alias", "a.txt", b"in").unwrap();
    assert_eq!(fs::read(s.base().join("real/a.txt")).unwrap(), b"in");
    assert_eq!(
        read_file_beneath(&s.base(), "alias/", "a.txt").unwrap(),
        b"in"
    );
    assert!(matches!(
        write_file_beneath(&s.base(), "away", "a.txt", b"x"),
        Err(FsError::RootEscapes)
    ));
    assert!(matches!(
        read_file_beneath(&s.base(), "away", "a.txt"),
        Err(FsError::RootEscapes)
    ));
    assert_eq!(fs::read_dir(s.outside()).unwrap().count(), 0);
    assert_eq!(
        FsError::RootEscapes.to_string(),
        "root resolves outside its configured boundary"
    );
}

#[test]
fn a_file_named_dash_is_a_file() {
    let s = Scratch::new();
    write_file_beneath(&s.base(), ".", "-", b"dash").unwrap();
    assert_eq!(read_file_beneath(&s.base(), ".", "-").unwrap(), b"dash");
}

/// Swaps two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`, Darwin `renamex_np`).
#[cfg(target_os = "linux")]
fn exchange(a: &CString, b: &CString) -> bool {
    // SAFETY: both paths are NUL-terminated and live for the call.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

#[cfg(any(target_os = "macos", target_os = "ios"))]
fn exchange(a: &CString, b: &CString) -> bool {
    // SAFETY: both paths are NUL-terminated and live for the call.
    unsafe { libc::renamex_np(a.as_ptr(), b.as_ptr(), libc::RENAME_SWAP) == 0 }
}

/// No atomic swap here: the race below is not exercised (it passes trivially).
#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "ios")))]
fn exchange(_a: &CString, _b: &CString) -> bool {
    false
}

#[test]
fn a_parent_swapped_for_an_outside_link_never_redirects_the_work() {
    const ATTEMPTS: usize = 2_000;
    let s = Scratch::new();
    let base = s.base();
    fs::create_dir_all(base.join("d")).unwrap();
    fs::write(base.join("d/secret.txt"), "inside").unwrap();
    fs::write(s.outside().join("secret.txt"), "OUTSIDE").unwrap();
    symlink(s.outside(), base.join("l")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let a = CString::new(base.join("d").into_os_string().into_encoded_bytes()).unwrap();
        let b = CString::new(base.join("l").into_os_string().into_encoded_bytes()).unwrap();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if exchange(&a, &b) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let mut leaked_reads = 0;
    for i in 0..ATTEMPTS {
        let _ = write_file_beneath(&base, ".", &format!("d/w-{i}.txt"), b"payload");
        if let Ok(content) = read_file_beneath(&base, ".", "d/secret.txt") {
            if content != b"inside" {
                leaked_reads += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let outside: Vec<_> = fs::read_dir(s.outside())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        swaps.load(Ordering::Relaxed) > 0,
        "the swapper never swapped"
    );
    assert_eq!(outside, vec![std::ffi::OsString::from("secret.txt")]);
    assert_eq!(
        fs::read(s.outside().join("secret.txt")).unwrap(),
        b"OUTSIDE"
    );
    assert_eq!(leaked_reads, 0);
}

/// A read never allocates past the limit: a sparse file one byte over it is refused from its
/// size, before any content is read.
#[test]
fn reads_over_the_limit_are_refused() {
    let scratch = Scratch::new();
    let big = fs::File::create(scratch.base().join("big.bin")).unwrap();
    big.set_len(aml_files::confined::MAX_READ_BYTES + 1)
        .unwrap();
    let error = read_file_beneath(&scratch.base(), ".", "big.bin").unwrap_err();
    assert!(matches!(error, FsError::TooLarge), "{error:?}");
    assert_eq!(error.to_string(), "file is larger than 268435456 bytes");
    big.set_len(3).unwrap();
    assert_eq!(
        read_file_beneath(&scratch.base(), ".", "big.bin").unwrap(),
        vec![0; 3]
    );
}
