//! Whether `clone(CLONE_VM | CLONE_VFORK)` really lends the child our memory here.
//!
//! Why: qemu-user runs such a clone as a plain `fork()` (it cannot share the emulated address
//! space with a second host process). The vfork child's errno store then lands in its own copy,
//! the parent returns before the child even tried `execve`, and a command that cannot start
//! reads as an exit with code 127 instead of `ENOENT`. So the first start asks the kernel (or
//! the emulator) once, with a child that only stores a flag and exits; where the flag does not
//! come back, the starter uses `fork.rs`, whose exec errors travel through a CLOEXEC pipe and
//! arrive either way.

use std::ffi::{c_int, c_void};
use std::io;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};

use super::sys::{clone_vfork, ChildStack};

/// Runs the probe child on `stack` and reports whether its store reached our memory.
pub(crate) fn shares_memory(stack: &mut ChildStack) -> io::Result<bool> {
    let flag = AtomicI32::new(0);
    // SAFETY: as in `Starter::start` (vfork/mod.rs): `probe_main` touches nothing but `flag`
    // (alive in this frame until after the child is reaped below) and exits without
    // returning; the child never unblocks the signals `clone_vfork` blocked.
    let pid = unsafe {
        clone_vfork(
            probe_main,
            stack,
            ptr::from_ref(&flag).cast_mut().cast::<c_void>(),
        )?
    };
    // Reaped before the flag is read: with real vfork the child has exited already; under a
    // fork emulation it may still be running, and only its exit proves the store is done.
    crate::sys::reap_blocking(pid);
    Ok(flag.load(Ordering::Relaxed) == 1)
}

extern "C" fn probe_main(flag: *mut c_void) -> c_int {
    // SAFETY: `flag` is the `&AtomicI32` that `shares_memory` passed to clone, alive until the
    // parent has reaped us.
    unsafe { &*flag.cast::<AtomicI32>() }.store(1, Ordering::Relaxed);
    // SAFETY: _exit ends this child only, running no atexit handler of the host.
    unsafe { libc::_exit(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real kernel shares the memory, so glibc Linux keeps the vfork path (under qemu-user
    /// this is false, which the arm64 test group observes through exec errors).
    #[test]
    fn the_kernel_shares_memory_with_a_vfork_child() {
        let mut stack = ChildStack::new().unwrap();
        assert!(shares_memory(&mut stack).unwrap());
    }
}
