#!/usr/bin/env node
// The `cargo` that `napi build` runs (scripts/build-addon.js points napi's CARGO at this file):
// the real cargo, with napi's NAPI_FORCE_BUILD_<CRATE> variables kept stable between builds.
//
// Why: napi-build's build script declares `rerun-if-env-changed=NAPI_FORCE_BUILD_<CRATE>`, and
// `napi build` sets that variable to Date.now() whenever its type-definition folder
// (target/napi-rs/<crate>-<hash of the build's settings>) lacks the crate's file, i.e. on the
// first build of each setting, and leaves it unset afterwards. Cargo records the value of the
// forced build; the next build sees "unset", reruns the build script and recompiles the addon
// crate (a fat-LTO release link: minutes) although nothing changed.
//
// So: when napi sets the variable, its value is saved next to that folder
// (`<folder>.force-build.json`); when napi leaves it unset, the saved value is passed again.
// Cargo then sees a change exactly when napi asks for one (type definitions missing), and never
// on an unchanged second build. Anything else goes to cargo untouched.
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"

const FORCE_PREFIX = "NAPI_FORCE_BUILD_"

/** The environment to run cargo with, given napi's; saves what napi forced. */
export function stableForceEnv(env) {
  const next = { ...env }
  const folder = env.NAPI_TYPE_DEF_TMP_FOLDER
  if (!folder) return next
  const stampPath = `${folder}.force-build.json`
  let saved = {}
  try {
    saved = JSON.parse(readFileSync(stampPath, "utf8"))
  } catch {
    saved = {}
  }
  const forced = Object.keys(env).filter((name) => name.startsWith(FORCE_PREFIX))
  for (const name of forced) saved[name] = env[name]
  for (const [name, value] of Object.entries(saved)) if (next[name] === undefined) next[name] = value
  if (forced.length > 0) {
    mkdirSync(dirname(stampPath), { recursive: true })
    writeFileSync(stampPath, `${JSON.stringify(saved)}\n`)
  }
  return next
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const env = stableForceEnv(process.env)
  // The cargo napi would have run: the caller's CARGO, if it had one, else the one on PATH.
  const cargo = env.AML_NAPI_REAL_CARGO || "cargo"
  delete env.AML_NAPI_REAL_CARGO
  delete env.CARGO
  const child = spawn(cargo, process.argv.slice(2), { env, stdio: "inherit" })
  // Ctrl-C reaches cargo through the terminal's process group; wait for it to finish.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal))
  child.on("error", (error) => {
    console.error(`napi-cargo: cannot run ${cargo}: ${error.message}`)
    process.exit(127)
  })
  child.on("close", (code, signal) => process.exit(code ?? (signal ? 128 : 1)))
}
