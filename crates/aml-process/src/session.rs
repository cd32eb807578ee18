//! The other members of a tree's session, read from `/proc`: what the tree teardown waits for
//! where orphans do not come back to us (no subreaper, see `local_tree/without_subreaper.rs`).
//!
//! Why session AND group: the leader ran `setsid`, so its pid `G` names both. Orphans keep both
//! ids when they are reparented to PID 1, so `/proc` still finds them after the leader died,
//! and a member that moved to another group of the session (`setpgid`, a job-control shell)
//! keeps the session id. Only `setsid` leaves both; that is the documented escape.

use libc::pid_t;

/// One member other than the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) pid: pid_t,
    /// Not reached by a signal to the group `G` (it moved to another group of the session).
    pub(crate) outside_group: bool,
    /// Dead, waiting for its parent (or PID 1) to reap it.
    pub(crate) zombie: bool,
}

/// Every process whose session or process group is `leader`, the leader excluded; `None` where
/// the members cannot be listed (no `/proc`: macOS, BSDs, a Linux without it mounted).
pub(crate) fn members(leader: pid_t) -> Option<Vec<Member>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        if pid == leader {
            continue;
        }
        // A process that ends while we read is simply not a member any more.
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(member) = parse_stat(pid, &stat, leader) {
            found.push(member);
        }
    }
    Some(found)
}

/// Whether `pid` is (still) a member of `leader`'s session or group, per its stat line.
pub(crate) fn is_member(pid: pid_t, leader: pid_t) -> bool {
    std::fs::read(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| parse_stat(pid, &stat, leader).is_some())
}

/// `pid (comm) state ppid pgrp session ...`; the command may hold spaces and parentheses, so
/// the fields start after the LAST `)`.
fn parse_stat(pid: pid_t, stat: &[u8], leader: pid_t) -> Option<Member> {
    let end = stat.iter().rposition(|&byte| byte == b')')?;
    let rest = std::str::from_utf8(stat.get(end + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let group: pid_t = fields.next()?.parse().ok()?;
    let session: pid_t = fields.next()?.parse().ok()?;
    (group == leader || session == leader).then_some(Member {
        pid,
        outside_group: group != leader,
        zombie: state == "Z",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_after_the_last_parenthesis() {
        let line = b"42 (a) b (c) S 1 7 9 0 -1 4194560";
        assert_eq!(
            parse_stat(42, line, 9),
            Some(Member {
                pid: 42,
                outside_group: true,
                zombie: false
            })
        );
        assert_eq!(
            parse_stat(42, b"42 (sleep) Z 1 7 7 0", 7).map(|member| member.zombie),
            Some(true)
        );
        assert_eq!(parse_stat(42, b"42 (sleep) S 1 8 8 0", 7), None);
    }
}
