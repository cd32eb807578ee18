//! The addon's own tokio runtime for process supervision, and the future → Promise bridge.
//! Rust-native providers (`src/tools/native_scripted.rs`) share it; they reach JS only through the
//! weak Tool dispatcher (`src/tools/dispatch.rs`), which queues every call onto the JS thread.
//!
//! Why not napi's `tokio_rt` feature: napi 3 starts its runtime (one worker per CPU) when the
//! module registers, so every `import "@aml-jsx/sdk"` would pay for threads that most
//! evaluations never use. This runtime is created on the first spawn, with two workers:
//! supervision is I/O-bound (pipes, pidfds, timers), and every fork happens on
//! `aml-process`'s dedicated spawner thread anyway.
//!
//! Promises come from `Env::create_deferred` (a threadsafe function per pending call, released
//! when it settles), so a pending read or wait keeps Node alive exactly as long as it is
//! pending, and a finished process leaves nothing referenced. No JS is ever called from a tokio
//! thread: results are converted in the deferred's resolver, on the JS thread.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::task::Poll;

use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{Env, Result};
use tokio::runtime::{Builder, Runtime};

use crate::boundary::guard::{guard, panic_error};

/// Worker threads of the process runtime (see the module docs for why two).
const WORKERS: usize = 2;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        // Before the first spawn, which always runs on this runtime.
        crate::process::supervisor::configure();
        Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .thread_name("aml-process-rt")
            .enable_all()
            .build()
            .expect("AML process runtime could not start")
    })
}

/// Whether the process runtime exists yet (tests prove plain evaluations never start it).
pub fn started() -> bool {
    RUNTIME.get().is_some()
}

/// Polls `fut`, turning a panic in any poll into `Err(payload)` instead of unwinding into
/// tokio (which would leave the Promise pending forever).
async fn caught<F: Future>(fut: F) -> std::thread::Result<F::Output> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(
        move |cx| match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        },
    )
    .await
}

type Resolver<V> = Box<dyn FnOnce(Env) -> Result<V>>;

/// Runs `fut` on the process runtime and returns a Promise of `convert(env, output)`.
/// `convert` runs on the JS thread; a panic in either half rejects the Promise.
pub fn spawn_promise<T, V, F, C>(env: &Env, fut: F, convert: C) -> Result<Object<'_>>
where
    T: Send + 'static,
    V: ToNapiValue + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
    C: FnOnce(Env, T) -> Result<V> + Send + 'static,
{
    // Guarded too: starting the runtime can panic (its threads may not start, e.g. under a
    // low RLIMIT_NPROC), and that must reject, not abort Node.
    guard(move || {
        let (deferred, promise) = env.create_deferred::<V, Resolver<V>>()?;
        runtime().spawn(async move {
            match caught(fut).await {
                Ok(Ok(output)) => {
                    deferred.resolve(Box::new(move |env| guard(|| convert(env, output))))
                }
                Ok(Err(error)) => deferred.reject(error),
                Err(payload) => deferred.reject(panic_error(payload)),
            }
        });
        Ok(promise)
    })
}
