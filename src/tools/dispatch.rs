//! The one path from tokio to JS Tool executors: a weak threadsafe function over the
//! facade's `dispatch(op, call, ref, input)` (lib/tools/native-dispatch.js), and the
//! [`ToolInvoker`] that Rust-native providers use on top of it.
//!
//! One dispatcher per Node environment (a thread-local on the JS thread), not per domain:
//! `dispatch` holds no per-evaluation state (a tool ref resolves to the instrumented wrapper
//! of one Agent call, which carries its domain, Agent span and lease), so one threadsafe
//! function serves every evaluation, costs one creation per process, and cannot be released
//! under a tokio task that still holds it when a domain is disposed. It is weak: it never
//! keeps Node alive. A pending native run keeps Node alive through its own Promise
//! (`spawn_promise`), which is exactly "only a pending evaluation keeps Node alive".
//!
//! JS is always called with `call_async_catch` / a return-value callback, so a throwing
//! `dispatch` becomes an `Err` here instead of a fatal exception. `dispatch` itself never
//! throws: it answers every call with an outcome object (oxc style).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aml_ports::{ToolCallError, ToolInvoker, ToolRef};
use async_trait::async_trait;
use napi::bindgen_prelude::{FnArgs, Function, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Error, Result, Status};
use napi_derive::napi;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::boundary::guard::guard;

/// `dispatch` ops. A cancel names the call id of an earlier `OP_CALL`.
const OP_CALL: u32 = 0;
const OP_CANCEL: u32 = 1;

/// How long a cancelled call waits for JS to confirm the abort (and say why) before it
/// settles on its own. JS races every Tool call against its signal, so the answer normally
/// arrives within a turn of the event loop; the bound only matters when the JS thread is
/// blocked, and guarantees the Rust side never hangs.
const CANCEL_GRACE: Duration = Duration::from_secs(1);

/// What `dispatch` resolves with. `value` is the output as JSON text (bulk data crosses as
/// JSON); on failure `name`/`message` describe the thrown value and `aborted` says it was
/// the abort reason of the call's signal.
#[napi(object)]
pub struct ToolOutcome {
    pub ok: bool,
    pub value: Option<String>,
    pub name: Option<String>,
    pub message: Option<String>,
    pub aborted: Option<bool>,
}

type Args = FnArgs<(u32, u32, u32, String)>;
type DispatchFn = ThreadsafeFunction<Args, Promise<ToolOutcome>, Args, Status, false, true>;

/// The dispatcher of one Node environment; implements [`ToolInvoker`].
pub struct Dispatcher {
    dispatch: DispatchFn,
}

/// Call ids, process-wide: JS keys running calls by id in one realm table, so ids must not
/// repeat across dispatchers (a test may install a new one while calls are in flight).
static NEXT_CALL: AtomicU32 = AtomicU32::new(1);

thread_local! {
    // Replaced (not mutated) on install, so runs that captured the old one keep using it.
    static CURRENT: RefCell<Option<Arc<Dispatcher>>> = const { RefCell::new(None) };
}

/// Installs `dispatch` as this environment's dispatcher (the facade does it once, lazily;
/// tests may replace it).
#[napi(
    ts_args_type = "dispatch: (op: number, call: number, ref: number, input: string) => Promise<ToolOutcome>"
)]
pub fn tool_dispatcher_install(dispatch: Function<Args, Promise<ToolOutcome>>) -> Result<()> {
    guard(|| {
        let dispatch = dispatch
            .build_threadsafe_function::<Args>()
            .weak::<true>()
            .build()?;
        let dispatcher = Arc::new(Dispatcher { dispatch });
        CURRENT.with(|current| current.replace(Some(dispatcher)));
        Ok(())
    })
}

#[napi]
pub fn tool_dispatcher_installed() -> Result<bool> {
    guard(|| Ok(CURRENT.with(|current| current.borrow().is_some())))
}

/// This environment's dispatcher, for a run about to move to tokio.
pub(crate) fn current() -> Result<Arc<Dispatcher>> {
    CURRENT
        .with(|current| current.borrow().clone())
        .ok_or_else(|| Error::from_reason("AML tool dispatcher is not installed"))
}

impl Dispatcher {
    /// Asks JS to abort call `call`. Fire and forget: the call's own outcome reports the
    /// result. The return-value callback is what makes a throw an `Err` (ignored) rather
    /// than a fatal exception.
    fn cancel(&self, call: u32) {
        let args = FnArgs::from((OP_CANCEL, call, 0, String::new()));
        self.dispatch.call_with_return_value(
            args,
            ThreadsafeFunctionCallMode::NonBlocking,
            |_, _| Ok(()),
        );
    }
}

/// Turns what JS answered into the port's result; a broken answer is the host's fault.
pub(crate) fn decode(answer: Result<ToolOutcome>) -> std::result::Result<Value, ToolCallError> {
    let outcome = answer.map_err(|error| {
        ToolCallError::unavailable(format!("AML tool dispatcher failed: {}", error.reason))
    })?;
    if outcome.ok {
        let text = outcome.value.unwrap_or_default();
        return serde_json::from_str(&text).map_err(|_| {
            ToolCallError::unavailable("AML tool dispatcher returned output that is not JSON")
        });
    }
    Err(ToolCallError::from_js(
        outcome.name.unwrap_or_else(|| "Error".into()),
        outcome.message.unwrap_or_default(),
        outcome.aborted == Some(true),
    ))
}

#[async_trait]
impl ToolInvoker for Dispatcher {
    async fn call(
        &self,
        tool: ToolRef,
        input: Value,
        cancel: CancellationToken,
    ) -> std::result::Result<Value, ToolCallError> {
        if cancel.is_cancelled() {
            return Err(ToolCallError::cancelled());
        }
        let call = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        let args = FnArgs::from((OP_CALL, call, tool.0, input.to_string()));
        let answer = async {
            // The first poll queues the call; the Promise it returns is awaited here too.
            let promise = self.dispatch.call_async_catch(args).await?;
            promise.await
        };
        tokio::pin!(answer);
        let answer = tokio::select! {
            // Biased: the call is queued before any cancel can be, so JS sees them in order.
            biased;
            answer = &mut answer => answer,
            () = cancel.cancelled() => {
                self.cancel(call);
                match tokio::time::timeout(CANCEL_GRACE, answer).await {
                    Ok(answer) => answer,
                    Err(_) => return Err(ToolCallError::cancelled()),
                }
            }
        };
        decode(answer)
    }
}
