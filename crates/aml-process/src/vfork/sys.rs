//! The system calls the parent side of `vfork/` needs, each with its safety argument.

use std::ffi::{c_int, c_void};
use std::io;
use std::ptr;

/// The child needs a few hundred bytes (its frames, glibc's thin wrappers); this leaves a wide
/// margin for debug builds. A guard page below turns an overflow into a SIGSEGV of the child.
const STACK_SIZE: usize = 64 * 1024;

/// An anonymous mapping used as the child's stack, with a guard page at its low end.
pub(crate) struct ChildStack {
    base: *mut c_void,
    len: usize,
}

impl ChildStack {
    pub(crate) fn new() -> io::Result<Self> {
        let guard = page_size();
        let len = STACK_SIZE + guard;
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK;
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let base = unsafe { libc::mmap(ptr::null_mut(), len, protection, flags, -1, 0) };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = ChildStack { base, len };
        // SAFETY: `guard` is one page at the page-aligned start of our own mapping.
        if unsafe { libc::mprotect(base, guard, libc::PROT_NONE) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The initial stack pointer: stacks grow down on every Linux target we build for. The end
    /// of a page-aligned mapping is 16-byte aligned, as the ABIs require.
    pub(crate) fn top(&self) -> *mut c_void {
        self.base.wrapping_byte_add(self.len)
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly our mapping; no child runs on it once clone has returned.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// The size of a memory page.
fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// The empty signal set.
pub(crate) fn empty_signal_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, and sigemptyset initialises all of it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    }
}

/// Every signal blocked on the calling thread until dropped, when the previous mask returns.
/// glibc keeps its two internal signals deliverable; see `child.rs` for why that is fine.
pub(crate) struct BlockedSignals(libc::sigset_t);

impl BlockedSignals {
    pub(crate) fn all() -> io::Result<Self> {
        // SAFETY: sigset_t is plain data; sigfillset initialises `all`, and pthread_sigmask
        // fully writes `previous` on success.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let mut previous: libc::sigset_t = std::mem::zeroed();
            match libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous) {
                0 => Ok(BlockedSignals(previous)),
                error => Err(io::Error::from_raw_os_error(error)),
            }
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores a mask pthread_sigmask itself returned, on the same thread (the
        // guard is a local of the spawner thread and never moves across threads).
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, ptr::null_mut()) };
    }
}

/// `clone(CLONE_VM | CLONE_VFORK | SIGCHLD)` of `main(arg)` on `stack` with every signal
/// blocked across the call: the one way both the starter and the memory probe make a vfork
/// child, so the probe tests exactly what the starter does. Returns once the child has
/// exec'd or exited. errno is read before anything else can change it; after a successful
/// clone it may hold the child's errno (shared TLS), so it is only reported on failure.
///
/// # Safety
/// `main` must never return into the caller's frame (it execs or `_exit`s), must run on
/// `stack` alone, and everything `arg` points to must outlive this call; the child shares
/// the caller's memory until then.
pub(crate) unsafe fn clone_vfork(
    main: extern "C" fn(*mut c_void) -> c_int,
    stack: &ChildStack,
    arg: *mut c_void,
) -> io::Result<libc::pid_t> {
    let blocked = BlockedSignals::all()?;
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    // SAFETY: the caller's contract above; the stack is ours and unused by anyone else, and
    // every signal is blocked (`blocked`), so no host handler can run in the child before it
    // resets them.
    let pid = unsafe { libc::clone(main, stack.top(), flags, arg) };
    let error = (pid == -1).then(io::Error::last_os_error);
    drop(blocked);
    error.map_or(Ok(pid), Err)
}
