//! Ad-hoc cost measurement, not a timed assertion: run with `--nocapture` to see the median
//! wall time of `exec("true")` over 200 sequential runs (spawn round trip on the spawner thread,
//! child creation + exec, exit notification, group drain), first from this small test process,
//! then again after it has allocated and touched ~200 MB.
//!
//! Why the second round: a plain `fork()` copies the page tables of every touched page, so its
//! cost grows with the host's RSS (a Node host sits at 150 MB+). A vfork-like spawn shares the
//! address space and should cost the same in both rounds.
//!
//! One test function on purpose: the 200 MB must not inflate the first round, which it would if
//! the rounds were separate tests running in parallel threads of this binary.

use std::time::{Duration, Instant};

use aml_process::{exec, SpawnOptions};

const RUNS: usize = 200;
const BIG: usize = 200 * 1024 * 1024;

#[tokio::test]
async fn median_exec_true() {
    for _ in 0..10 {
        exec("true", &[], SpawnOptions::default()).await.unwrap();
    }
    measure("small host").await;
    let ballast = Ballast::touched(BIG);
    measure(&format!(
        "host + {} MB touched",
        ballast.len / (1024 * 1024)
    ))
    .await;
    drop(ballast);
}

async fn measure(host: &str) {
    let mut supervised = Vec::with_capacity(RUNS);
    let mut baseline = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let output = exec("true", &[], SpawnOptions::default()).await.unwrap();
        supervised.push(started.elapsed());
        assert!(output.exit.success());
        // For scale: std's blocking spawn+wait of the same command, no supervision. Without a
        // pre_exec hook std uses posix_spawn, i.e. the vfork-like path.
        let started = Instant::now();
        let status = std::process::Command::new("true").status().unwrap();
        baseline.push(started.elapsed());
        assert!(status.success());
    }
    report(host, "aml_process::exec(\"true\")", supervised);
    report(host, "std Command::new(\"true\").status()", baseline);
}

fn report(host: &str, label: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction) as usize];
    println!(
        "[{host}] {label}: {} runs, median {:?} (p10 {:?}, p90 {:?})",
        samples.len(),
        at(0.5),
        at(0.1),
        at(0.9)
    );
}

/// Anonymous memory with every 4 KiB page written, so each one has a page-table entry that a
/// `fork()` would have to copy. Huge pages are declined so the entry count does not depend on
/// the machine's THP setting (a V8 heap is not THP-backed either).
struct Ballast {
    start: *mut libc::c_void,
    len: usize,
}

impl Ballast {
    fn touched(len: usize) -> Self {
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let start = unsafe { libc::mmap(std::ptr::null_mut(), len, protection, flags, -1, 0) };
        assert_ne!(start, libc::MAP_FAILED, "mmap of the ballast failed");
        // SAFETY: advice on the mapping we just created; failure only means THP may apply.
        #[cfg(target_os = "linux")]
        let _ = unsafe { libc::madvise(start, len, libc::MADV_NOHUGEPAGE) };
        for offset in (0..len).step_by(4096) {
            // SAFETY: `offset < len`, inside the writable mapping created above.
            unsafe { start.cast::<u8>().add(offset).write_volatile(1) };
        }
        Ballast { start, len }
    }
}

impl Drop for Ballast {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `touched`, which nothing borrows.
        unsafe { libc::munmap(self.start, self.len) };
    }
}
