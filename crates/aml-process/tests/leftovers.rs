//! What happens to members that outlive the leader, to orphans, and to processes that are not
//! ours.

mod common;

use std::process::Command;
use std::time::Duration;

use aml_process::{exec, process_exists, spawn, SpawnOptions};
use common::{assert_all_gone, read_pids, sh};

#[tokio::test]
async fn exec_tears_down_background_jobs_when_the_leader_exits() {
    // The background sleep holds stdout open: without teardown exec would never see EOF.
    let (command, argv) = sh("sleep 1000 & echo $!");
    let output = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    assert!(output.exit.success());
    let pid: u32 = String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_all_gone(&[pid], Duration::ZERO);
}

#[tokio::test]
async fn exec_does_not_hang_on_a_process_that_left_the_group() {
    // `setsid` escapes the group (a documented limitation): it is not killed, but it must not
    // keep exec waiting for an EOF that never comes.
    // It prints its pid only after setsid, and the leader gives it time to do so.
    let (command, argv) = sh("setsid sh -c 'echo $$; exec sleep 1000' & sleep 0.3");
    let output = exec(command, &argv, SpawnOptions::default()).await.unwrap();
    let escaped: i32 = String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_exists(escaped as u32));
    // It was orphaned to us (the subreaper) but is not ours to reap; clean up by hand.
    // SAFETY: kill and waitpid on a pid this test started; `status` is a valid out-pointer.
    unsafe {
        libc::kill(escaped, libc::SIGKILL);
        let mut status = 0;
        assert_eq!(libc::waitpid(escaped, &mut status, 0), escaped);
    }
}

#[tokio::test]
async fn orphans_are_reaped_while_the_leader_still_runs() {
    // The subshell exits at once, so its sleep is orphaned to us (the subreaper) and exits
    // 0.1 s later: a zombie of ours that the periodic sweep must reap.
    let (command, argv) = sh("(sleep 0.1 & echo $!); sleep 1000");
    let mut process = spawn(command, &argv, SpawnOptions::default())
        .await
        .unwrap();
    let orphan = read_pids(&mut process.take_stdout().unwrap(), 1).await[0];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while process_exists(orphan) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!process_exists(orphan), "orphan {orphan} was not reaped");
    assert!(
        process_exists(process.pid()),
        "the leader must still be running"
    );
    process.kill().await;
}

#[tokio::test]
async fn other_children_of_the_host_are_never_reaped_by_us() {
    // Stand-ins for libuv's children: one in our own group, one leading its own group.
    let mut plain = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
    let mut grouped = {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .args(["-c", "exit 5"])
            .process_group(0)
            .spawn()
            .unwrap()
    };
    std::thread::sleep(Duration::from_millis(100));
    // Both are zombies now. Run supervised trees with orphans and kills around them.
    for _ in 0..5 {
        let (command, argv) = sh("(sleep 0.01 &); sleep 1000 & echo $!; wait");
        let mut process = spawn(command, &argv, SpawnOptions::default())
            .await
            .unwrap();
        read_pids(&mut process.take_stdout().unwrap(), 1).await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        process.kill().await;
        exec("true", &[], SpawnOptions::default()).await.unwrap();
    }
    assert_eq!(plain.wait().unwrap().code(), Some(3));
    assert_eq!(grouped.wait().unwrap().code(), Some(5));
}
