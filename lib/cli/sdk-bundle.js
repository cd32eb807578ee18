// Which copy of the SDK's modules `aml run` loads for an in-process workflow: dist/ (built by
// scripts/bundle-sdk.js: the same sources as a few bundled modules, a third of the import
// cost) when dist/manifest.json still matches every source file it was built from, else the
// modules themselves. A file whose size and mtime match is current; otherwise its content
// hash decides (an installed package's files carry npm's fixed mtime). Any mismatch, or no
// dist/ at all, means the modules: an edited source is never shadowed by an old bundle.
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const packageRoot = fileURLToPath(new URL("../../", import.meta.url))

function matches(root, file) {
  const path = join(root, file.path)
  const stats = statSync(path)
  if (stats.size !== file.size) return false
  if (stats.mtimeMs === file.mtimeMs) return true
  return createHash("sha1").update(readFileSync(path)).digest("hex") === file.sha1
}

/**
 * `{ index, map }` for a current bundle — `index` the bundled entry's URL, `map` each
 * source entry URL (index.js, testing/index.js, …) to its bundled module — or undefined.
 */
export function currentBundle(root = packageRoot) {
  let manifest
  try {
    manifest = JSON.parse(readFileSync(join(root, "dist", "manifest.json"), "utf8"))
    if (!manifest.files.every((file) => matches(root, file))) return undefined
  } catch {
    return undefined
  }
  const map = new Map()
  for (const [name, source] of Object.entries(manifest.entries)) {
    map.set(pathToFileURL(join(root, source)).href, pathToFileURL(join(root, "dist", `${name}.js`)).href)
  }
  return { index: map.get(pathToFileURL(join(root, "index.js")).href), map }
}
