//! The core guarantee: after `kill()` and `wait()`, no process of the tree exists, not even as
//! a zombie: `kill(pid, 0)` fails with ESRCH for every pid at once. Orphaned zombies would
//! otherwise linger until PID 1 reaps them (on these machines only every ~2 s, if at all).
//! Repeated 100 times to shake out races.

mod common;

use std::time::{Duration, Instant};

use aml_process::{spawn, ExitStatus, SpawnOptions};
use common::{assert_all_gone, group_members, read_pids, sh};

/// Level 1 (the leader) starts 5 level-2 shells, each starting 2 `sleep`s (level 3): 16 pids,
/// 10 of them grandchildren. Every process prints its pid.
const TREE: &str = r#"
echo $$
i=0
while [ $i -lt 5 ]; do
  sh -c 'echo $$; sleep 1000 & echo $!; sleep 1000 & echo $!; wait' &
  i=$((i + 1))
done
wait
"#;

// Multi-threaded like the napi host: forks, reaps and orphan adoption happen on different threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_trees_leave_no_process_and_no_zombie() {
    let started = Instant::now();
    for round in 0..100 {
        let (command, argv) = sh(TREE);
        let mut process = spawn(command, &argv, SpawnOptions::default())
            .await
            .unwrap();
        let mut stdout = process.take_stdout().unwrap();
        let pids = read_pids(&mut stdout, 16).await;
        assert_eq!(
            pids[0],
            process.pid(),
            "round {round}: the leader prints first"
        );
        for &pid in &pids {
            assert!(
                aml_process::process_exists(pid),
                "round {round}: {pid} not started"
            );
        }
        process.kill().await;
        let status = process.wait().await.unwrap();
        assert_eq!(status, ExitStatus::Signaled(libc::SIGTERM), "round {round}");
        // Immediately, not "eventually": PID 1 here reaps orphans only every ~2 s, so a
        // grace window would let a broken supervisor pass. kill() resolves after our reaping.
        assert_all_gone(&pids, Duration::ZERO);
        assert_eq!(
            group_members(process.pid()),
            Vec::<u32>::new(),
            "round {round}"
        );
    }
    println!(
        "100 trees of 16 processes killed and reaped in {:?}",
        started.elapsed()
    );
}
