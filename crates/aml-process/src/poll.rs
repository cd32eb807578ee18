//! The backoff every polling loop of the crate shares (exit polling without pidfds, waiting for
//! a group to empty, the janitor's blocking reap).
//!
//! Why its own module: the loops live in modules that otherwise do not depend on each other
//! (`exit_watch`, `tree`, `group`), so the bound sits below all of them.

use std::time::Duration;

use tokio::time::Instant;

/// First delay of a backoff: most trees are gone within a millisecond of their SIGKILL.
pub(crate) const FIRST_POLL: Duration = Duration::from_millis(1);

/// Upper bound of every polling backoff: how stale "is the group empty yet?" may get.
pub(crate) const MAX_POLL: Duration = Duration::from_millis(20);

/// The delay after `delay` in a capped doubling backoff.
pub(crate) fn next(delay: Duration) -> Duration {
    (delay * 2).min(MAX_POLL)
}

/// One step of a polling loop bounded by `deadline`: `false` once the deadline has passed;
/// otherwise sleeps `delay` (never past the deadline), doubles it up to [`MAX_POLL`] and
/// returns `true`.
pub(crate) async fn pause(deadline: Option<Instant>, delay: &mut Duration) -> bool {
    let now = Instant::now();
    if deadline.is_some_and(|deadline| now >= deadline) {
        return false;
    }
    let wake = now + *delay;
    tokio::time::sleep_until(deadline.map_or(wake, |deadline| wake.min(deadline))).await;
    *delay = next(*delay);
    true
}
