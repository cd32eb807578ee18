//! Ad-hoc cost measurement, not a timed assertion: run with `--nocapture` to see the median
//! wall time of `exec("true")` over 200 sequential runs (spawn round trip on the spawner thread,
//! fork+exec, exit notification, group drain).

use std::time::{Duration, Instant};

use aml_process::{exec, SpawnOptions};

const RUNS: usize = 200;

#[tokio::test]
async fn median_exec_true() {
    for _ in 0..10 {
        exec("true", &[], SpawnOptions::default()).await.unwrap();
    }
    let mut supervised = Vec::with_capacity(RUNS);
    let mut baseline = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let output = exec("true", &[], SpawnOptions::default()).await.unwrap();
        supervised.push(started.elapsed());
        assert!(output.exit.success());
        // For scale: std's blocking spawn+wait of the same command, no supervision.
        let started = Instant::now();
        let status = std::process::Command::new("true").status().unwrap();
        baseline.push(started.elapsed());
        assert!(status.success());
    }
    report("aml_process::exec(\"true\")", supervised);
    report("std::process::Command::new(\"true\").status()", baseline);
}

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction) as usize];
    println!(
        "{label}: {} runs, median {:?} (p10 {:?}, p90 {:?})",
        samples.len(),
        at(0.5),
        at(0.1),
        at(0.9)
    );
}
