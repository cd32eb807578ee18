//! The addon's process supervisor (`aml-process`'s `supervisor/`): the host's own Node binary
//! re-executed with this addon loaded, serving on the socket it inherits as stdin.
//!
//! Why Node and not a separate executable: the addon is the only native artifact the package
//! ships (`npm/<triple>`), and a Node that just loads it and blocks in Rust needs nothing more.
//! It costs one start (~50 ms, on the first spawn, off the JS thread) and ~45 MB of resident
//! memory once per host, instead of a process-wide subreaper in the application's own process
//! that leaves a zombie for every orphan of the application's own children.

use crate::boundary::guard::guard;
use napi_derive::napi;

/// Where the supervisor finds this addon. Linux only: elsewhere there is no subreaper for a
/// supervisor process to be, so the host supervises its own trees (docs/SANDBOX.md).
#[cfg(target_os = "linux")]
const ADDON_VARIABLE: &str = "AML_PROCESS_SUPERVISOR_ADDON";

/// Loads the addon and never returns to JS until the host disconnects. No `NODE_OPTIONS` or
/// other host environment reaches it (the supervisor starts with exactly one variable), so no
/// preload hook of the application runs in it.
#[cfg(target_os = "linux")]
const MAIN: &str = "const m = { exports: {} }; \
     process.dlopen(m, process.env.AML_PROCESS_SUPERVISOR_ADDON); \
     m.exports.processSupervisorMain()";

/// Configures `aml-process` to supervise through the re-executed host, if both the host's
/// executable and this addon's file can be named; otherwise the host stays its own supervisor.
pub(crate) fn configure() {
    #[cfg(target_os = "linux")]
    if let (Ok(node), Some(addon)) = (std::env::current_exe(), addon_path()) {
        aml_process::use_supervisor(aml_process::SupervisorCommand {
            program: node,
            // A small heap and one V8 worker: the supervisor runs no JS after loading us.
            args: [
                "--max-old-space-size=16",
                "--max-semi-space-size=1",
                "--v8-pool-size=1",
                "-e",
                MAIN,
            ]
            .map(String::from)
            .to_vec(),
            env: vec![(ADDON_VARIABLE.to_owned(), addon)],
        });
    }
}

/// The file this code was loaded from, found through the dynamic loader.
#[cfg(target_os = "linux")]
fn addon_path() -> Option<String> {
    // SAFETY: Dl_info is plain data; dladdr fills it for an address inside a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let address = configure as *const () as *const libc::c_void;
    // SAFETY: `address` is inside this addon's text; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader while the object is loaded.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    path.to_str().ok().map(str::to_owned)
}

/// The supervisor's main: serves the host on stdin until it disconnects, blocking the JS
/// thread (nothing else runs in this process).
#[napi]
pub fn process_supervisor_main() -> napi::Result<()> {
    guard(|| {
        aml_process::serve_supervisor()
            .map_err(|error| napi::Error::from_reason(format!("process supervisor: {error}")))
    })
}

/// Ends the supervisor before the host exits (called from the main thread's `exit` event):
/// every tree it still holds is killed, and it is reaped by this process instead of being
/// left to PID 1, which on some machines never reaps. Blocks up to `within_ms`; returns
/// whether no supervisor is left unreaped.
#[napi]
pub fn process_supervisor_stop(within_ms: u32) -> napi::Result<bool> {
    guard(|| {
        Ok(aml_process::stop_supervisor(
            std::time::Duration::from_millis(within_ms.into()),
        ))
    })
}
