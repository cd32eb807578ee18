// Set by scripts/test-arm64.js for the specs it runs under qemu-user (test group arm64). Two
// limits of qemu-user 7.2 make some guarantees unobservable there, so the tests that assert
// them are skipped by name under emulation (never counted as passed):
// - it refuses PR_SET_CHILD_SUBREAPER: the supervisor serves with the reduced guarantee of
//   docs/SANDBOX.md (orphans inside a tree are reaped by PID 1, not before kill() resolves);
// - it runs clone(CLONE_VM | CLONE_VFORK) as a fork, so the vfork child's exec error never
//   reaches the spawner's memory: a command that cannot start reads as exit 127.
export const underQemuUser = process.env.AML_UNDER_QEMU_USER === "1"

// Title suffixes, empty where the tests run.
export const NO_SUBREAPER = underQemuUser ? " [skipped under qemu-user: no subreaper, orphans are reaped by PID 1]" : ""
export const NO_SHARED_VFORK = underQemuUser ? " [skipped under qemu-user: CLONE_VFORK does not share memory, exec errors read as exit 127]" : ""
