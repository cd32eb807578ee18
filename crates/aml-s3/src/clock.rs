//! Time for the lease, injectable so tests can age a lock without waiting 20 minutes.

use chrono::{DateTime, Utc};

/// The wall clock the lease reads (`updatedAt` and staleness).
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock moved by an adjustable offset: what a test clock of the JS facade
/// (`Date.now() + offset`) becomes on this side. Only tests install one.
#[derive(Debug, Default)]
pub struct OffsetClock {
    offset_ms: std::sync::atomic::AtomicI64,
}

impl OffsetClock {
    pub fn set_offset_ms(&self, offset_ms: i64) {
        self.offset_ms
            .store(offset_ms, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        let offset = self.offset_ms.load(std::sync::atomic::Ordering::Relaxed);
        Utc::now() + chrono::Duration::milliseconds(offset)
    }
}

/// `updatedAt` as JavaScript's `Date#toISOString()` writes it, so a TypeScript AML process
/// reads our lock and we read its.
pub fn iso(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
