//! Binding for the Sandbox MCP relay (`aml_acp::Relay`): the relay process is a Sandbox
//! `spawn()` that `lib/agents/acp/sandbox-process.js` pumps like an external agent, under the port
//! key `RELAY_PORT_BIT | handle`; requests are routed through the bridge of `bridge`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aml_acp::{external, Relay};
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result};
use napi_derive::napi;

use crate::acp::bridges::relay_target;
use crate::acp::ports::{forget, register, RELAY_PORT_BIT};
use crate::boundary::async_runtime::{runtime, spawn_promise};
use crate::boundary::guard::guard;

#[derive(Default)]
struct Relays {
    live: HashMap<u32, Arc<Relay>>,
    next: u32,
}

static RELAYS: Mutex<Option<Relays>> = Mutex::new(None);

fn relays<R>(f: impl FnOnce(&mut Relays) -> R) -> R {
    let mut relays = RELAYS.lock().unwrap_or_else(|p| p.into_inner());
    f(relays.get_or_insert_with(Relays::default))
}

fn relay(key: u32) -> Result<Arc<Relay>> {
    relays(|r| r.live.get(&key).cloned())
        .ok_or_else(|| Error::from_reason("Sandbox MCP relay handle is closed"))
}

/// How long a stopped agent or relay may take to exit after SIGTERM, in ms
/// (`AML_ACP_KILL_GRACE_MS` or the default), for the facade's own wait on a relay's pump.
#[napi]
pub fn acp_kill_grace_ms() -> Result<u32> {
    guard(|| Ok(u32::try_from(aml_acp::kill_grace().as_millis()).unwrap_or(u32::MAX)))
}

/// Serves the already spawned relay process `id` for bridge `bridge`; returns its port key
/// (for the pump and the calls below). `AML_ACP_KILL_GRACE_MS` bounds the pump's kill.
#[napi]
pub fn acp_relay_open(bridge: u32, id: String) -> Result<u32> {
    guard(|| {
        let target = relay_target(bridge)?;
        let grace = aml_acp::kill_grace();
        let _entered = runtime().enter();
        let (agent, port) = external(id);
        let started = Arc::new(Relay::start(target, agent, grace));
        let key = relays(|r| {
            loop {
                r.next = r.next.wrapping_add(1) % RELAY_PORT_BIT;
                if r.next != 0 && !r.live.contains_key(&(r.next | RELAY_PORT_BIT)) {
                    break;
                }
            }
            let key = r.next | RELAY_PORT_BIT;
            r.live.insert(key, started);
            key
        });
        register(key, port);
        Ok(key)
    })
}

/// Resolves with the relay's guest port, or rejects with the documented relay failure.
#[napi(ts_return_type = "Promise<number>")]
pub fn acp_relay_ready(env: &Env, key: u32) -> Result<Object<'_>> {
    let relay = guard(|| relay(key))?;
    let ready = async move { relay.ready().await.map_err(Error::from_reason) };
    spawn_promise(env, ready, |_, port| Ok(u32::from(port)))
}

/// Kills the relay and forgets it; resolves with its failure messages (none normally).
#[napi(ts_return_type = "Promise<string[]>")]
pub fn acp_relay_close(env: &Env, key: u32) -> Result<Object<'_>> {
    let relay = guard(|| relay(key))?;
    let closed = async move {
        let errors = relay.close().await;
        relays(|r| r.live.remove(&key));
        forget(key);
        Ok(errors)
    };
    spawn_promise(env, closed, |_, errors| Ok(errors))
}

/// Relays not yet closed (leak checks in tests).
#[napi]
pub fn live_acp_relays() -> Result<u32> {
    guard(|| Ok(relays(|r| r.live.len() as u32)))
}
