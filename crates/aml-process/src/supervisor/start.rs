//! Starting the supervisor process from the host's spawner thread, like a leader: its own
//! session, and the parent-death signal tied to that never-exiting thread.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, OwnedFd};

use super::client::Client;
use super::socket::socket_pair;
use super::SupervisorCommand;
use crate::launch::Launch;
use crate::options::SpawnOptions;
use crate::starter::Starter;
use crate::sys;

/// Starts the supervisor with `command` and waits until it serves: its stdin is the socket,
/// its stdout `/dev/null`, its stderr the host's (so a crash report is not lost).
pub(crate) fn start(starter: &mut Starter, command: &SupervisorCommand) -> io::Result<Client> {
    let options = SpawnOptions {
        inherit_env: false,
        env: command.env.clone(),
        ..SpawnOptions::default()
    };
    let program = command
        .program
        .to_str()
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let launch = Launch::new(program, &command.args, &options)?;
    let (ours, theirs) = socket_pair()?;
    let null = OwnedFd::from(
        OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")?,
    );
    let stderr = match sys::duplicate_above_stdio(io::stderr().as_fd()) {
        Ok(stderr) => stderr,
        Err(_) => OwnedFd::from(File::open("/dev/null")?),
    };
    let stdio = [
        sys::above_stdio(theirs)?,
        sys::above_stdio(null)?,
        sys::above_stdio(stderr)?,
    ];
    let pid = starter.start(&launch, &stdio)?;
    drop(stdio);
    Client::new(ours, pid)
}
