// Builds the native addon with `napi build`, saying first, in one line, what it builds and
// about how long that takes; the build's own output follows on stderr.
//
//   node scripts/build-addon.js [napi build options…]      (npm run build passes its options)
//
// napi runs cargo through scripts/napi-cargo.js, which keeps napi's forced-rebuild variable
// stable, so a second build with nothing changed recompiles nothing (docs/PACKAGING.md).
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const napiCli = join(root, "node_modules", "@napi-rs", "cli", "dist", "cli.js")
const napiCargo = join(root, "scripts", "napi-cargo.js")

/** The build's setting: what cargo compiles differently (profile and features). */
export const buildSetting = (args) =>
  `${args.includes("--release") ? "release" : "debug"}, ${args.includes("--no-default-features") ? "without test hooks" : "with test hooks"}`

/**
 * The one line printed before a build: what, where, and the durations to expect. `previous` is
 * the setting of the last build in this checkout: cargo keeps one fingerprint for the addon
 * crate (a cdylib) whatever its features, so a build after one with the other features compiles
 * the addon crate again even when no source changed.
 */
export function buildBanner(args, previous) {
  const setting = buildSetting(args)
  const release = args.includes("--release")
  const outIndex = args.indexOf("--output-dir")
  const out = outIndex >= 0 ? args[outIndex + 1] : "."
  const where = out.startsWith(root) ? out.slice(root.length + 1) || "." : out
  let timing = release
    ? "about 6 min from scratch on 2 cores, about 2 min after a Rust change (the fat-LTO link), seconds when nothing changed"
    : "a few minutes from scratch, seconds when nothing changed"
  if (previous && previous !== setting) {
    timing = `the last build was ${previous}, so cargo compiles the addon crate again (${release ? "about 2 min on 2 cores" : "about a minute"}) even if nothing changed`
  }
  return `build-addon: building the native addon (${setting}) into ${where}/ — ${timing}`
}

const lastSettingPath = join(root, "target", "build-addon-last-setting")

function lastSetting() {
  try {
    return readFileSync(lastSettingPath, "utf8").trim()
  } catch {
    return undefined
  }
}

/** Runs `napi build <args>`; resolves when it succeeded. Output goes to stderr. */
export function buildAddon(args, { banner = true } = {}) {
  if (banner) console.error(buildBanner(args, lastSetting()))
  const env = { ...process.env }
  // A .js file cannot be spawned as a program on Windows: there napi runs cargo itself.
  if (process.platform !== "win32") {
    // napi spawns CARGO as a program: keep it executable even where a download lost the mode.
    try {
      chmodSync(napiCargo, 0o755)
    } catch {
      // Not ours to change (a read-only checkout): the mode from git is used as it is.
    }
    if (env.CARGO) env.AML_NAPI_REAL_CARGO = env.CARGO
    env.CARGO = napiCargo
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [napiCli, "build", ...args], { cwd: root, env, stdio: ["ignore", process.stderr, "inherit"] })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      if (code === 0) {
        mkdirSync(dirname(lastSettingPath), { recursive: true })
        writeFileSync(lastSettingPath, `${buildSetting(args)}\n`)
        resolve()
      } else reject(new Error(`napi build ${args.join(" ")} exited with ${code ?? signal}`))
    })
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await buildAddon(process.argv.slice(2))
  } catch (error) {
    console.error(error.message)
    process.exitCode = 1
  }
}
