// The Windows guard (issue 35): the crates that already compile for Windows must keep
// compiling, so the later port starts from them. Windows itself is not a built target (the
// package throws MissingNativeBindingError there, __test__/package/package-install.spec.ts);
// this only type-checks those crates for x86_64-pc-windows-gnu, which needs no Windows SDK.
// `ring` (rustls, under aml-restate) compiles C in its build script, so the check runs through
// cargo-zigbuild, whose zig is the Windows C compiler (scripts/install-toolchains.sh installs
// both from PyPI). Adds the rustup target when it is missing. Run by `npm run test:rust`.
//
//   node scripts/check-windows.js
import { spawnSync } from "node:child_process"

const TARGET = "x86_64-pc-windows-gnu"
/** The napi-free crates with no Unix-only code; the others (processes, confined files,
 * archives, Docker over a Unix socket) are the port's work. */
export const WINDOWS_CRATES = ["aml-text", "aml-ports", "aml-engine", "aml-journal", "aml-restate"]

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: "inherit", ...options })
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status ?? result.signal}`)
}

// Same pins as scripts/install-toolchains.sh.
if (spawnSync("cargo-zigbuild", ["--version"], { stdio: "ignore" }).status !== 0) {
  run("python3", ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "ziglang==0.14.1", "cargo-zigbuild==0.24.1"])
}
const installed = spawnSync("rustup", ["target", "list", "--installed"], { encoding: "utf8" })
if (installed.status === 0 && !installed.stdout.split("\n").includes(TARGET)) run("rustup", ["target", "add", TARGET])
run("cargo-zigbuild", ["check", "--target", TARGET, ...WINDOWS_CRATES.flatMap((crate) => ["-p", crate])])
console.log(`check-windows: ${WINDOWS_CRATES.join(", ")} compile for ${TARGET}`)
