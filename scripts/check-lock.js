// Checks that package-lock.json can serve `npm ci`: every dependency and optional dependency
// of every locked package (and the root's dev dependencies) has an entry, found the way Node
// resolves it (the package's own node_modules, then each enclosing one).
//
//   node scripts/check-lock.js        prints what is missing; exits 1 if anything is
//
// Why it exists: an `npm install` against a registry that lacks some other platform's build
// (a mirror, or a version not yet replicated) drops those optional platform packages from the
// lock (`opencode-darwin-arm64`, `@cbor-extract/cbor-extract-win32-x64`, …) without a word,
// and `npm ci` on a fresh clone then refuses the lock ("Missing: … from lock file").
// __test__/package-lock.spec.ts runs this and `npm ci --dry-run`.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** `name (wanted by <lock path>)` for every dependency without a lock entry. */
export function missingLockEntries(lock) {
  const packages = lock.packages ?? {}
  const missing = []
  for (const [path, entry] of Object.entries(packages)) {
    if (entry.link) continue
    const wanted = { ...entry.dependencies, ...entry.optionalDependencies, ...(path === "" ? entry.devDependencies : {}) }
    for (const name of Object.keys(wanted)) {
      if (!resolves(packages, path, name)) missing.push(`${name} (wanted by ${path || "the root"})`)
    }
  }
  return missing
}

function resolves(packages, from, name) {
  let base = from
  for (;;) {
    if (packages[`${base === "" ? "" : `${base}/`}node_modules/${name}`]) return true
    if (base === "") return false
    // Up one node_modules level: a/node_modules/b/node_modules/c → a/node_modules/b.
    base = base.slice(0, base.lastIndexOf("node_modules/")).replace(/\/$/, "")
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = missingLockEntries(JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")))
  for (const line of missing) console.log(`package-lock.json lacks ${line}`)
  if (missing.length > 0) {
    console.log("npm ci will refuse this lock; see docs/CONTRIBUTING.md (Keeping package-lock.json whole)")
    process.exitCode = 1
  }
}
