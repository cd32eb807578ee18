//! The supervisor process where the kernel refuses `PR_SET_CHILD_SUBREAPER` (qemu-user answers
//! EINVAL, some container sandboxes filter `prctl`): it must still start and serve, with the
//! reduced guarantee of docs/SANDBOX.md, instead of leaving every spawn to a host that cannot
//! be a subreaper either.
//!
//! The refusal is the real one: the re-executed supervisor installs a seccomp filter that makes
//! exactly that `prctl` fail with EINVAL, as qemu-user does, before it serves. Its own `main`
//! (harness = false), like `supervised.rs`.

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod common;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod subreaper_refused_linux;

fn main() {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    subreaper_refused_linux::main();
}
