//! The live evaluation domains of this JS thread, addressed by small integer handles.
//!
//! Why not a napi class: on this machine a call to a `#[napi]` class method costs roughly
//! three times a free function (the `this` unwrap and type checks dominate), and the driver
//! makes one or two calls per evaluated value. Free functions taking a handle keep the hot
//! path at the cost of an explicit `domain_dispose`, which the facade calls in a `finally`.
//!
//! Domains never leave their thread, and no binding function calls back into JS while a
//! domain is borrowed, so the `RefCell` can never be re-entered.

use std::cell::RefCell;

use aml_engine::{Domain, SparePositions};
use napi::{Error, Result};

use crate::boundary::local_slots::LocalSlots;

#[derive(Default)]
struct Registry {
    domains: LocalSlots<Domain>,
    /// One journaled evaluation's emptied position tables, for the next one to reuse.
    spare_positions: Option<SparePositions>,
}

thread_local! {
    static DOMAINS: RefCell<Registry> = RefCell::new(Registry::default());
}

pub fn insert(domain: Domain) -> u32 {
    DOMAINS.with(|cell| cell.borrow_mut().domains.insert(domain))
}

pub fn remove(id: u32) {
    DOMAINS.with(|cell| {
        let mut registry = cell.borrow_mut();
        if let Some(mut domain) = registry.domains.remove(id) {
            if let Some(spare) = domain.take_positions() {
                registry.spare_positions = Some(spare);
            }
        }
    })
}

/// The position tables a journaled evaluation that ended left (`aml_engine::SparePositions`).
pub fn take_spare_positions() -> Option<SparePositions> {
    DOMAINS.with(|cell| cell.borrow_mut().spare_positions.take())
}

/// Runs `f` on domain `id`; a disposed or unknown handle is a JS error, never a panic.
pub fn with<T>(id: u32, f: impl FnOnce(&mut Domain) -> Result<T>) -> Result<T> {
    DOMAINS.with(|cell| match cell.borrow_mut().domains.get_mut(id) {
        Some(domain) => f(domain),
        None => Err(Error::from_reason("AML evaluation domain is closed")),
    })
}

pub fn live() -> usize {
    DOMAINS.with(|cell| cell.borrow().domains.live())
}
