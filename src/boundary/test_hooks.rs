//! Entry points that exist only for the test suite. They are compiled with the `test-hooks`
//! cargo feature, which is on by default (contributor and test builds) and off in the
//! release addon that is packed and published (`--no-default-features`).
//!
//! `skip_typescript` keeps them out of `binding.d.ts` *and* out of the generated loader's
//! export list (napi builds that list from the type definitions), so `native/binding.js` is
//! the same file whichever build produced it. The suite reaches them on the loaded addon's
//! own exports object (`__test__/support/native-test-hooks.ts`); the facade never does.

use napi::bindgen_prelude::Object;
use napi::{Env, Result};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;
use crate::boundary::panic_report::expecting_panic;

/// Panics inside the guard, so tests prove a Rust panic reaches JS as a thrown error (with
/// its message and location) instead of aborting Node. Expected, so not printed to stderr.
#[napi(skip_typescript)]
pub fn panic_for_test(message: String) -> Result<()> {
    guard(|| expecting_panic(|| panic!("{message}")))
}

fn explode() -> Result<()> {
    expecting_panic(|| panic!("async process panic"))
}

/// Panics inside the async bridge (tests prove it becomes a rejected Promise).
#[napi(skip_typescript)]
pub fn process_panic_for_test(env: &Env) -> Result<Object<'_>> {
    spawn_promise(env, async { explode() }, |_, ()| Ok(()))
}
