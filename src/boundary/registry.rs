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

#[derive(Default)]
struct Registry {
    slots: Vec<Option<Domain>>,
    free: Vec<u32>,
    /// One journaled evaluation's emptied position tables, for the next one to reuse.
    spare_positions: Option<SparePositions>,
}

thread_local! {
    static DOMAINS: RefCell<Registry> = RefCell::new(Registry::default());
}

pub fn insert(domain: Domain) -> u32 {
    DOMAINS.with(|cell| {
        let mut registry = cell.borrow_mut();
        match registry.free.pop() {
            Some(id) => {
                registry.slots[id as usize] = Some(domain);
                id
            }
            None => {
                registry.slots.push(Some(domain));
                (registry.slots.len() - 1) as u32
            }
        }
    })
}

pub fn remove(id: u32) {
    DOMAINS.with(|cell| {
        let mut registry = cell.borrow_mut();
        if let Some(slot) = registry.slots.get_mut(id as usize) {
            if let Some(mut domain) = slot.take() {
                registry.free.push(id);
                if let Some(spare) = domain.take_positions() {
                    registry.spare_positions = Some(spare);
                }
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
    DOMAINS.with(|cell| {
        let mut registry = cell.borrow_mut();
        match registry.slots.get_mut(id as usize).and_then(Option::as_mut) {
            Some(domain) => f(domain),
            None => Err(Error::from_reason("AML evaluation domain is closed")),
        }
    })
}

pub fn live() -> usize {
    DOMAINS.with(|cell| {
        let registry = cell.borrow();
        registry.slots.len() - registry.free.len()
    })
}
