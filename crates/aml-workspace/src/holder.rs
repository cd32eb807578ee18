//! Who holds a lock: host name, boot id, pid namespace, pid and the process's start time, so
//! an acquirer on the same machine can prove a holder is gone (it was SIGKILLed, its machine
//! did not reboot since, and its pid is free or names a younger process) and take the lock
//! over at once instead of after the 20-minute staleness window. Everything else — another
//! host, another boot, another pid namespace, an unreadable `/proc` — is "unknown", and the
//! staleness rule applies as before. Linux only; elsewhere every holder is unknown.

use std::fs;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// One process's identity as a lock records it (`{hostname, bootId, pidNamespace, pid,
/// startTime}` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Holder {
    pub hostname: String,
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// `readlink /proc/self/ns/pid` (`pid:[4026531836]`): pids only mean something inside it.
    pub pid_namespace: String,
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat` (clock ticks since boot).
    pub start_time: u64,
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// `(state, starttime)` of `/proc/<pid>/stat`, or `None` when there is no such process.
fn stat_of(pid: u32) -> Result<Option<(char, u64)>, ()> {
    let text = match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(()),
    };
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the
    // last `)`. Fields from there: state is field 3, starttime field 22.
    let rest = text.rsplit_once(')').ok_or(())?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first().and_then(|s| s.chars().next()).ok_or(())?;
    let start = fields.get(19).and_then(|s| s.parse().ok()).ok_or(())?;
    Ok(Some((state, start)))
}

impl Holder {
    /// This process, or `None` where the facts cannot be read (not Linux).
    pub fn current() -> Option<&'static Holder> {
        static CURRENT: OnceLock<Option<Holder>> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let pid = std::process::id();
                Some(Holder {
                    hostname: read_trimmed("/proc/sys/kernel/hostname")?,
                    boot_id: read_trimmed("/proc/sys/kernel/random/boot_id")?,
                    pid_namespace: fs::read_link("/proc/self/ns/pid")
                        .ok()?
                        .to_string_lossy()
                        .into_owned(),
                    pid,
                    start_time: stat_of(pid).ok()??.1,
                })
            })
            .as_ref()
    }

    /// Process `pid` of this host, boot and pid namespace, while it runs (tests record a child
    /// as a holder with it).
    pub fn of_process(pid: u32) -> Option<Holder> {
        let me = Holder::current()?;
        Some(Holder {
            pid,
            start_time: stat_of(pid).ok()??.1,
            ..me.clone()
        })
    }

    /// Whether this holder provably no longer exists: same host, boot and pid namespace as
    /// this process, and its pid is free, a zombie, or a process started at another time.
    pub fn is_gone(&self) -> bool {
        self.liveness() == Liveness::Gone
    }

    /// What this process can prove about the holder (the one rule, used by locks and by the
    /// sweep of what killed saves left behind).
    pub fn liveness(&self) -> Liveness {
        let Some(me) = Holder::current() else {
            return Liveness::Unknown;
        };
        if self.hostname != me.hostname
            || self.boot_id != me.boot_id
            || self.pid_namespace != me.pid_namespace
        {
            return Liveness::Unknown;
        }
        if self.pid == me.pid {
            // Our own pid: gone only if it was an earlier process with our number.
            return if self.start_time == me.start_time {
                Liveness::Alive
            } else {
                Liveness::Gone
            };
        }
        match stat_of(self.pid) {
            Ok(None) => Liveness::Gone,
            Ok(Some((state, start))) if start != self.start_time || matches!(state, 'Z' | 'X') => {
                Liveness::Gone
            }
            Ok(Some(_)) => Liveness::Alive,
            Err(()) => Liveness::Unknown,
        }
    }

    /// A short form for file names (`<pid>-<startTime>-<machine>`, the last 8 hex digits of
    /// the SHA-256 of host name, boot id and pid namespace): enough to name this process on
    /// this machine, so a scratch file can say who wrote it.
    pub fn tag(&self) -> String {
        format!("{}-{}-{}", self.pid, self.start_time, self.machine())
    }

    /// The holder a [`Holder::tag`] names, when it was made on this machine, boot and pid
    /// namespace (elsewhere the tag proves nothing: `None`).
    pub fn of_tag(tag: &str) -> Option<Holder> {
        let me = Holder::current()?;
        let mut parts = tag.splitn(3, '-');
        let pid = parts.next()?.parse().ok()?;
        let start_time = parts.next()?.parse().ok()?;
        (parts.next()? == me.machine()).then(|| Holder {
            pid,
            start_time,
            ..me.clone()
        })
    }

    fn machine(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for part in [&self.hostname, &self.boot_id, &self.pid_namespace] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        hasher.finalize()[..4]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// What can be proven about a recorded process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Same machine, boot and pid namespace, and that process no longer runs.
    Gone,
    /// Same machine, boot and pid namespace, and that very process still runs.
    Alive,
    /// Anything else: another host, boot or namespace, an unreadable `/proc`, not Linux.
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_recorded() {
        let me = Holder::current().expect("Linux /proc");
        assert_eq!(me.pid, std::process::id());
        assert!(!me.is_gone());
        let json = serde_json::to_value(me).unwrap();
        // Sorted: serde_json keeps insertion order when another crate of the workspace turns
        // on `preserve_order`, and sorted order otherwise.
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["bootId", "hostname", "pid", "pidNamespace", "startTime"]
        );
    }

    #[test]
    fn a_reaped_child_is_gone_and_an_other_start_time_is_another_process() {
        let me = Holder::current().unwrap().clone();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(Holder { pid, ..me.clone() }.is_gone());
        let younger = Holder {
            start_time: me.start_time + 1,
            ..me.clone()
        };
        assert!(younger.is_gone());
        assert_eq!(me.liveness(), Liveness::Alive);
    }

    #[test]
    fn a_tag_names_a_process_of_this_machine_only() {
        let me = Holder::current().unwrap();
        assert_eq!(Holder::of_tag(&me.tag()).as_ref(), Some(me));
        let elsewhere = Holder {
            hostname: "elsewhere".into(),
            ..me.clone()
        };
        assert_eq!(Holder::of_tag(&elsewhere.tag()), None);
        for bad in ["", "1", "1-2", "x-2-00000000", "1-2-3-4"] {
            assert_eq!(Holder::of_tag(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn other_hosts_boots_and_namespaces_are_unknown() {
        let me = Holder::current().unwrap().clone();
        for other in [
            Holder {
                hostname: "elsewhere".into(),
                pid: u32::MAX,
                ..me.clone()
            },
            Holder {
                boot_id: "another-boot".into(),
                pid: u32::MAX,
                ..me.clone()
            },
            Holder {
                pid_namespace: "pid:[1]".into(),
                pid: u32::MAX,
                ..me.clone()
            },
        ] {
            assert!(!other.is_gone(), "{other:?}");
            assert_eq!(other.liveness(), Liveness::Unknown, "{other:?}");
        }
    }
}
