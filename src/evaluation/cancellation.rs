//! Cancellation tokens the facade can cancel by id, for Rust-native provider runs.
//!
//! The facade creates a token before starting a run, cancels it from its `AbortSignal`
//! listener (DESIGN §3: the facade listens, the engine sees a tokio-util token, napi's
//! `AbortSignal` type is never used), and releases it in a `finally`. Ids are never reused
//! while live, so a late cancel of a finished run is a no-op, never a wrong run.
//! `<Script>` host runs (`process_exec.rs`) use the same table.

use std::collections::HashMap;
use std::sync::Mutex;

use napi::{Error, Result};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::boundary::guard::guard;

#[derive(Default)]
struct Tokens {
    live: HashMap<u32, CancellationToken>,
    next: u32,
}

static TOKENS: Mutex<Option<Tokens>> = Mutex::new(None);

fn tokens<R>(f: impl FnOnce(&mut Tokens) -> R) -> R {
    let mut tokens = TOKENS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f(tokens.get_or_insert_with(Tokens::default))
}

/// The live token `id`; an unknown id is a JS error (the facade released it too early).
pub(crate) fn token(id: u32) -> Result<CancellationToken> {
    tokens(|tokens| tokens.live.get(&id).cloned())
        .ok_or_else(|| Error::from_reason("AML cancellation token is closed"))
}

/// Forgets token `id` (used by runs that own their token's lifetime).
pub(crate) fn release(id: u32) {
    tokens(|tokens| tokens.live.remove(&id));
}

/// A new token; returns its id.
#[napi]
pub fn cancellation_create() -> Result<u32> {
    guard(|| {
        Ok(tokens(|tokens| {
            let id = loop {
                tokens.next = tokens.next.wrapping_add(1).max(1);
                if !tokens.live.contains_key(&tokens.next) {
                    break tokens.next;
                }
            };
            tokens.live.insert(id, CancellationToken::new());
            id
        }))
    })
}

/// Cancels token `id`. Unknown ids are ignored (the run already finished).
#[napi]
pub fn cancellation_cancel(id: u32) -> Result<()> {
    guard(|| {
        if let Some(token) = tokens(|tokens| tokens.live.get(&id).cloned()) {
            token.cancel();
        }
        Ok(())
    })
}

/// Forgets token `id`; runs holding a clone keep working with it.
#[napi]
pub fn cancellation_release(id: u32) -> Result<()> {
    guard(|| {
        tokens(|tokens| tokens.live.remove(&id));
        Ok(())
    })
}

/// Live tokens (leak checks in tests).
#[napi]
pub fn live_cancellations() -> Result<u32> {
    guard(|| Ok(tokens(|tokens| tokens.live.len() as u32)))
}
