//! How long a `lock.json` lease lasts (BW-3, issue 34 §6).
//!
//! The reference renews every 5 minutes and lets anyone take over a lock not renewed for 20
//! minutes. A durable deployment whose workers run on several hosts may shorten that with
//! `s3Workspace({ lockLeaseMs })`: the holder then renews every third of the lease and is
//! taken over once a whole lease passed without renewal. The holder writes its lease into the
//! lock (`leaseMs`), and an acquirer judges a lock by the lease *it records*, never by its own
//! setting: a holder renewing every 5 minutes is never taken over after 3 seconds because the
//! acquirer was configured so, and a lock without `leaseMs` (the TypeScript SDK's, an older
//! version's) keeps the 20 minutes.

use std::time::Duration;

/// The reference's renewal interval (the Workspace lock protocol's, `aml_workspace::lock`).
pub const DEFAULT_REFRESH: Duration = aml_workspace::lock::UPDATE;
/// The reference's staleness interval, also the longest lease a lock may record.
pub const DEFAULT_STALE: Duration = aml_workspace::lock::STALE;
/// The shortest lease: renewals every third of it still leave S3 round trips room, and
/// clocks of different hosts must agree well within it.
pub const MIN_LEASE: Duration = Duration::from_secs(1);

/// The lease policy of one holder: renewed every `refresh`, recoverable by others after
/// `stale` without renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockTimings {
    pub refresh: Duration,
    pub stale: Duration,
}

impl Default for LockTimings {
    fn default() -> Self {
        Self {
            refresh: DEFAULT_REFRESH,
            stale: DEFAULT_STALE,
        }
    }
}

impl LockTimings {
    /// The timings of `lockLeaseMs`: stale after `lease_ms`, renewed every third of it (so
    /// two renewals may fail in a row before the lease runs out). `None` outside
    /// [`MIN_LEASE`]..=[`DEFAULT_STALE`].
    pub fn for_lease_ms(lease_ms: u64) -> Option<LockTimings> {
        let stale = Duration::from_millis(lease_ms);
        (MIN_LEASE..=DEFAULT_STALE)
            .contains(&stale)
            .then(|| LockTimings {
                refresh: stale / 3,
                stale,
            })
    }

    /// What the holder writes as `leaseMs`.
    pub fn lease_ms(&self) -> u64 {
        u64::try_from(self.stale.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Why `value` (the JavaScript number given as `s3Workspace({ lockLeaseMs })`) is not a lease
/// [`LockTimings::for_lease_ms`] accepts: the option's exact message, or `None` when it is one.
pub fn lease_ms_problem(value: f64) -> Option<String> {
    let (min, max) = (MIN_LEASE.as_millis(), DEFAULT_STALE.as_millis());
    let usable = value.fract() == 0.0 && value >= min as f64 && value <= max as f64;
    (!usable).then(|| format!("S3 Workspace lockLeaseMs must be an integer from {min} to {max}"))
}

/// How long a lock that records `lease_ms` counts as held after its `updatedAt`: the recorded
/// lease when it is one a holder may have chosen, otherwise (absent, below [`MIN_LEASE`],
/// above [`DEFAULT_STALE`]) the reference's 20 minutes.
pub fn recorded_lease(lease_ms: Option<u64>) -> Duration {
    lease_ms
        .and_then(LockTimings::for_lease_ms)
        .map_or(DEFAULT_STALE, |timings| timings.stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_accepts_exactly_the_leases_the_lock_accepts() {
        let message = "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000";
        for bad in [
            0.0,
            999.0,
            1_000.5,
            1_200_001.0,
            f64::NAN,
            f64::INFINITY,
            -1_000.0,
        ] {
            assert_eq!(lease_ms_problem(bad).as_deref(), Some(message), "{bad}");
        }
        for good in [1_000.0, 3_000.0, 1_200_000.0] {
            assert_eq!(lease_ms_problem(good), None, "{good}");
            assert!(LockTimings::for_lease_ms(good as u64).is_some());
        }
    }

    #[test]
    fn the_defaults_are_the_references() {
        let timings = LockTimings::default();
        assert_eq!(timings.refresh, Duration::from_secs(300));
        assert_eq!(timings.stale, Duration::from_secs(1200));
        assert_eq!(timings.lease_ms(), 1_200_000);
    }

    #[test]
    fn a_lease_is_renewed_every_third_of_it() {
        let timings = LockTimings::for_lease_ms(3_000).unwrap();
        assert_eq!(timings.stale, Duration::from_secs(3));
        assert_eq!(timings.refresh, Duration::from_secs(1));
        assert_eq!(timings.lease_ms(), 3_000);
        assert_eq!(
            LockTimings::for_lease_ms(1_200_000),
            Some(LockTimings {
                refresh: Duration::from_secs(400),
                stale: Duration::from_secs(1200),
            })
        );
        assert!(LockTimings::for_lease_ms(1_000).is_some());
        for bad in [0, 1, 999, 1_200_001, u64::MAX] {
            assert_eq!(LockTimings::for_lease_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_lock_counts_as_held_for_the_lease_it_records() {
        assert_eq!(recorded_lease(Some(3_000)), Duration::from_secs(3));
        assert_eq!(recorded_lease(Some(1_000)), Duration::from_secs(1));
        // No lease (the TypeScript SDK's lock) or one no holder may choose: 20 minutes.
        for unusable in [None, Some(0), Some(999), Some(1_200_001), Some(u64::MAX)] {
            assert_eq!(recorded_lease(unusable), DEFAULT_STALE, "{unusable:?}");
        }
    }
}
