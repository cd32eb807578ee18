// Set by scripts/test-arm64.js for the specs it runs under qemu-user (test group arm64), where
// the kernel's PR_SET_CHILD_SUBREAPER is refused: the process supervisor then serves with the
// guarantee of docs/SANDBOX.md "Without a subreaper", and specs may size their repetitions to
// the emulator's speed (never skip an assertion).
export const underQemuUser = process.env.AML_UNDER_QEMU_USER === "1"
