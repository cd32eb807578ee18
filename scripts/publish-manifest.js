// The root package's manifest as published, written around `npm pack` / `npm publish`:
//
//   prepack   package.json → the publish manifest (original kept in target/)
//   postpack  the original package.json back
//
// The repository's manifest keeps `"prepare": "npm run build"`, so a contributor's
// `npm install` builds the addon. A consumer must never build, so the published manifest
// carries no scripts, devDependencies or test configuration, and lists the per-platform addon packages in
// `optionalDependencies` (what `napi prepublish` writes): npm installs the one matching the
// consumer's os/cpu/libc and the napi loader (native/binding.js) loads it.
//
// The command is named here, not in the repository's manifest: there `bin` is a bare path
// ("bin/aml.js"), which npm names after the package (`sdk`). npx, asked for `aml` inside a
// checkout whose own manifest declares an `aml` bin, installs the checkout into its cache and
// runs `prepare` (a full release build) before every first use; with no `aml` in the checkout's
// manifest it runs node_modules/.bin/aml, which scripts/link-bin.js links (docs/CLI.md).
//
// Only platform packages that are staged with their addon (npm/<triple>/<main> exists, see
// scripts/pack-release.js and the release workflow) are listed: a release lists exactly the
// binaries it publishes.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifestPath = join(root, "package.json")
const backupPath = join(root, "target", "package.json.prepack")

/** The command the published package installs, and the file it runs. */
export const PUBLISHED_BIN = { aml: "bin/aml.js" }

/** Scripts npm runs on install or pack; none may survive into the published manifest. */
export const LIFECYCLE_SCRIPTS = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"]

/** `[{ name, dir, main }]` for every npm/<triple> package whose addon file is present. */
export function stagedPlatformPackages(base = root) {
  const npmDir = join(base, "npm")
  if (!existsSync(npmDir)) return []
  return readdirSync(npmDir)
    .sort()
    .map((triple) => join(npmDir, triple))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, ...JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter((pkg) => typeof pkg.main === "string" && existsSync(join(pkg.dir, pkg.main)))
}

/** The publish manifest for `manifest` given the staged platform packages. */
export function publishManifest(manifest, platformPackages) {
  // Development-only fields go; `ava` is the repository's test runner configuration, and
  // `allowScripts` / `overrides` steer only the repository's own install (npm reads them from
  // the root project, never from a dependency).
  const { allowScripts: _allow, ava: _ava, devDependencies: _dev, overrides: _overrides, scripts: _scripts, ...published } = manifest
  for (const pkg of platformPackages) {
    if (pkg.version !== manifest.version) {
      throw new Error(`${pkg.name} is at ${pkg.version}, the root package at ${manifest.version}`)
    }
  }
  if (manifest.bin !== PUBLISHED_BIN.aml) {
    throw new Error(`package.json "bin" is ${JSON.stringify(manifest.bin)}; keep it the bare path ${JSON.stringify(PUBLISHED_BIN.aml)} (see docs/CLI.md)`)
  }
  published.bin = PUBLISHED_BIN
  published.optionalDependencies = Object.fromEntries(platformPackages.map((pkg) => [pkg.name, manifest.version]))
  return published
}

function prepack() {
  // A pack that died between prepack and postpack left the original in target/: restore it
  // first, so the publish manifest is always derived from the repository's own.
  if (existsSync(backupPath)) copyFileSync(backupPath, manifestPath)
  if (!existsSync(join(root, "native", "binding.js"))) {
    throw new Error("native/binding.js (the napi loader) is missing: run `npm run build` first")
  }
  const platformPackages = stagedPlatformPackages()
  if (platformPackages.length === 0) {
    throw new Error("no npm/<triple> package holds a built addon: pack with `npm run pack:release`")
  }
  const original = readFileSync(manifestPath, "utf8")
  mkdirSync(dirname(backupPath), { recursive: true })
  writeFileSync(backupPath, original)
  const published = publishManifest(JSON.parse(original), platformPackages)
  writeFileSync(manifestPath, `${JSON.stringify(published, null, 2)}\n`)
}

function postpack() {
  if (!existsSync(backupPath)) return
  copyFileSync(backupPath, manifestPath)
  rmSync(backupPath)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const step = process.argv[2]
  if (step === "prepack") prepack()
  else if (step === "postpack") postpack()
  else throw new Error(`usage: node scripts/publish-manifest.js prepack|postpack (got ${step})`)
}
