//! Plain Node-API callbacks for the evaluator's hot path (`src/hot_path/callbacks.rs`).
//!
//! Why not `#[napi]`: napi-rs 3 wraps every synchronous function that takes arguments in a
//! "native borrow scope" (a mutex-guarded registry entry, thread-local pushes and heap
//! allocations, so a borrowed JS value can outlive the call in an async sink). None of these
//! calls keeps a JS value, and the driver makes several per evaluated value: measured here,
//! the scope cost more than the engine work itself (about a third of a fanned-out Agent's
//! CPU time). These callbacks convert their few scalar and string arguments directly and
//! keep napi-rs's error and panic behaviour: failures are thrown as napi-rs throws them.

use std::cell::RefCell;
use std::ffi::c_char;
use std::ptr;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys::{self, napi_env, napi_value};
use napi::{Error, JsError, Result, Status};

use crate::boundary::exact_text::{decode_to_utf16, encode_utf16, needs_decode, needs_exact_read};
use crate::boundary::guard::guard;

/// One raw callback: `$body` computes the JS result from `$env` and `$info`. The caller
/// imports `napi_env`, `napi_callback_info`, `napi_value` and `respond`.
macro_rules! raw_callback {
    ($name:ident, |$env:ident, $info:ident| $body:block) => {
        unsafe extern "C" fn $name($env: napi_env, $info: napi_callback_info) -> napi_value {
            // SAFETY: Node passes the env and callback info of this very call, and every
            // value read through them stays live for the call.
            unsafe { respond($env, || $body) }
        }
    };
}
pub(crate) use raw_callback;

/// Reads up to `N` arguments; missing ones are `undefined`.
///
/// # Safety
/// `env` and `info` must be the ones Node passed to the running callback.
pub unsafe fn args<const N: usize>(
    env: napi_env,
    info: sys::napi_callback_info,
) -> Result<[napi_value; N]> {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    // SAFETY: argv has room for argc values; Node fills missing ones with undefined.
    check(unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    })?;
    Ok(argv)
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::from(status),
            "AML native call received an invalid argument",
        ))
    }
}

/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn u32_arg(env: napi_env, value: napi_value) -> Result<u32> {
    let mut out = 0;
    // SAFETY: the caller's contract; Node rejects non-numbers with napi_number_expected.
    check(unsafe { sys::napi_get_value_uint32(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn i32_arg(env: napi_env, value: napi_value) -> Result<i32> {
    let mut out = 0;
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_get_value_int32(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn f64_arg(env: napi_env, value: napi_value) -> Result<f64> {
    let mut out = 0.0;
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_get_value_double(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn bool_arg(env: napi_env, value: napi_value) -> Result<bool> {
    let mut out = false;
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_get_value_bool(env, value, &mut out) })?;
    Ok(out)
}

/// True for `undefined` and `null` (an absent optional argument).
///
/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn is_nullish(env: napi_env, value: napi_value) -> Result<bool> {
    let mut kind = 0;
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_typeof(env, value, &mut kind) })?;
    Ok(kind == sys::ValueType::napi_undefined || kind == sys::ValueType::napi_null)
}

/// An optional string argument: `undefined`/`null` is `None`.
///
/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn optional_string(env: napi_env, value: napi_value) -> Result<Option<String>> {
    // SAFETY: the caller's contract.
    if unsafe { is_nullish(env, value) }? {
        return Ok(None);
    }
    let mut out = String::new();
    // SAFETY: the caller's contract.
    unsafe { read_string(env, value, &mut out) }?;
    Ok(Some(out))
}

thread_local! {
    // One reusable buffer per argument position: string arguments are copied out of V8
    // without a heap allocation per call once the buffers have grown.
    static STRINGS: RefCell<[String; 3]> = const { RefCell::new([String::new(), String::new(), String::new()]) };
}

/// The buffer size of the first copy attempt (grown buffers keep their capacity).
const FIRST_READ: usize = 128;

/// Copies the JS string `value` into `out` (replacing its contents).
///
/// # Safety
/// `value` must be a live value of `env`.
pub unsafe fn read_string(env: napi_env, value: napi_value, out: &mut String) -> Result<()> {
    let mut bytes = std::mem::take(out).into_bytes();
    bytes.clear();
    bytes.reserve(FIRST_READ);
    let capacity = bytes.capacity();
    let mut written = 0;
    // One copy into the buffer as it is: most hot-path strings (span ids, names, prompts)
    // fit, and asking V8 for the UTF-8 length first costs as much as the copy.
    // SAFETY: the buffer has `capacity` bytes; Node writes at most capacity - 1 and a NUL.
    check(unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            bytes.as_mut_ptr().cast::<c_char>(),
            capacity,
            &mut written,
        )
    })?;
    // A truncated copy stops at most 3 bytes short of the end (it never splits a
    // character), so anything shorter than that is the whole string.
    if written + 4 >= capacity {
        let mut len = 0;
        // SAFETY: a null buffer asks for the UTF-8 length only.
        check(unsafe {
            sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len)
        })?;
        bytes.reserve(len + 1);
        // SAFETY: the buffer now has capacity for len bytes and the terminating NUL.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                env,
                value,
                bytes.as_mut_ptr().cast::<c_char>(),
                len + 1,
                &mut written,
            )
        })?;
    }
    // SAFETY: Node wrote `written` bytes of valid UTF-8 (lone surrogates become U+FFFD).
    unsafe { bytes.set_len(written) };
    // SAFETY: as above, the bytes are UTF-8.
    *out = unsafe { String::from_utf8_unchecked(bytes) };
    if needs_exact_read(out) {
        // A lone surrogate became U+FFFD above (or the text holds the escape): read the
        // exact code units instead (src/boundary/exact_text.rs).
        // SAFETY: the caller's contract.
        let units = unsafe { read_utf16(env, value) }?;
        out.clear();
        encode_utf16(&units, out);
    }
    Ok(())
}

/// # Safety
/// `value` must be a live string value of `env`.
unsafe fn read_utf16(env: napi_env, value: napi_value) -> Result<Vec<u16>> {
    let mut len = 0;
    // SAFETY: a null buffer asks for the length in code units only.
    check(unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len) })?;
    let mut units: Vec<u16> = Vec::with_capacity(len + 1);
    let mut written = 0;
    // SAFETY: the buffer has room for len units and the terminating NUL.
    check(unsafe {
        sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), len + 1, &mut written)
    })?;
    // SAFETY: Node wrote `written` code units.
    unsafe { units.set_len(written) };
    Ok(units)
}

/// Runs `f` with string arguments read into the thread's reusable buffers.
pub fn with_strings<T>(f: impl FnOnce(&mut [String; 3]) -> Result<T>) -> Result<T> {
    STRINGS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffers) => f(&mut buffers),
        // Re-entered (never on the hot path): fresh buffers.
        Err(_) => f(&mut [String::new(), String::new(), String::new()]),
    })
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn u32_value(env: napi_env, value: u32) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_uint32(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn f64_value(env: napi_env, value: f64) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_double(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn bool_value(env: napi_env, value: bool) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_get_boolean(env, value, &mut out) })?;
    Ok(out)
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn string_value(env: napi_env, value: &str) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    if needs_decode(value) {
        // Engine text carrying lone surrogates or a literal escape (src/boundary/exact_text.rs).
        let units = decode_to_utf16(value);
        // SAFETY: the pointer and length describe `units`.
        check(unsafe {
            sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, &mut out)
        })?;
        return Ok(out);
    }
    // SAFETY: the pointer and length describe `value`'s UTF-8 bytes.
    check(unsafe {
        sys::napi_create_string_utf8(
            env,
            value.as_ptr().cast::<c_char>(),
            value.len() as isize,
            &mut out,
        )
    })?;
    Ok(out)
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn string_array(env: napi_env, values: &[String]) -> Result<napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_array_with_length(env, values.len(), &mut array) })?;
    for (index, value) in values.iter().enumerate() {
        // SAFETY: the caller's contract; `array` is a live array of this env.
        let item = unsafe { string_value(env, value) }?;
        check(unsafe { sys::napi_set_element(env, array, index as u32, item) })?;
    }
    Ok(array)
}

/// The body of one raw callback: panics and errors are thrown as napi-rs would throw them,
/// and the callback returns `undefined` (null) after a throw.
///
/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn respond(env: napi_env, body: impl FnOnce() -> Result<napi_value>) -> napi_value {
    match guard(body) {
        Ok(value) => value,
        Err(error) => {
            // SAFETY: env is live; napi-rs's own conversion builds and throws the JS error.
            unsafe { JsError::from(error).throw_into(env) };
            ptr::null_mut()
        }
    }
}

/// A raw callback as Node calls it.
pub type Callback = unsafe extern "C" fn(napi_env, sys::napi_callback_info) -> napi_value;

/// Sets `callbacks` as functions on a new object.
///
/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn function_table(env: napi_env, callbacks: &[(&str, Callback)]) -> Result<napi_value> {
    let mut table = ptr::null_mut();
    // SAFETY: the caller's contract.
    check(unsafe { sys::napi_create_object(env, &mut table) })?;
    for (name, callback) in callbacks {
        let mut function = ptr::null_mut();
        // SAFETY: the name pointer and length describe `name`; no callback data is used.
        check(unsafe {
            sys::napi_create_function(
                env,
                name.as_ptr().cast::<c_char>(),
                name.len() as isize,
                Some(*callback),
                ptr::null_mut(),
                &mut function,
            )
        })?;
        let key = unsafe { string_value(env, name) }?;
        // SAFETY: table and key are live values of env.
        check(unsafe { sys::napi_set_property(env, table, key, function) })?;
    }
    Ok(table)
}

/// Engine text returned by a `#[napi]` function: decoded to the exact JS string.
pub struct JsText(pub String);

impl ToNapiValue for JsText {
    unsafe fn to_napi_value(env: napi_env, value: Self) -> Result<napi_value> {
        // SAFETY: napi-rs calls this with the env of the running callback.
        unsafe { string_value(env, &value.0) }
    }
}

/// A list of engine texts returned by a `#[napi]` function.
pub struct JsTexts(pub Vec<String>);

impl ToNapiValue for JsTexts {
    unsafe fn to_napi_value(env: napi_env, value: Self) -> Result<napi_value> {
        // SAFETY: napi-rs calls this with the env of the running callback.
        unsafe { string_array(env, &value.0) }
    }
}

/// # Safety
/// `env` must be the running callback's env.
pub unsafe fn undefined(env: napi_env) -> Result<napi_value> {
    let mut out = std::ptr::null_mut();
    // SAFETY: the caller's contract.
    if unsafe { sys::napi_get_undefined(env, &mut out) } != sys::Status::napi_ok {
        return Err(Error::from_reason(
            "AML native call could not return undefined",
        ));
    }
    Ok(out)
}
