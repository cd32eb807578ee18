// Builds dist/: the SDK's four entry points (index, testing, jsx-runtime, jsx-dev-runtime)
// bundled into a few ES modules with shared chunks. `aml run` loads these instead of the
// ~115 modules under lib/ when dist/manifest.json matches the sources (lib/cli/sdk-bundle.js);
// nothing else uses them. Packages stay external; the addon loader stays ../native/binding.js.
// Run by `npm run build`; `node scripts/bundle-sdk.js` alone rebuilds it.
import { createHash } from "node:crypto"
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { build } from "esbuild"

const root = fileURLToPath(new URL("..", import.meta.url))
const outdir = join(root, "dist")
const ENTRIES = { index: "index.js", "jsx-dev-runtime": "jsx-dev-runtime/index.js", "jsx-runtime": "jsx-runtime/index.js", testing: "testing/index.js" }

rmSync(outdir, { force: true, recursive: true })
const result = await build({
  absWorkingDir: root,
  bundle: true,
  entryPoints: ENTRIES,
  // The loader is imported as ../../native/binding.js from lib/core/native.js; from dist/ it
  // is one level up, so the plugin keeps it external under the path that resolves there.
  plugins: [{ name: "native-loader", setup: (b) => b.onResolve({ filter: /\/native\/binding\.js$/ }, () => ({ external: true, path: "../native/binding.js" })) }],
  format: "esm",
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  outdir,
  packages: "external",
  platform: "node",
  splitting: true,
  target: "node20",
})
const inputs = Object.keys(result.metafile.inputs).sort()
const files = inputs.map((path) => {
  const content = readFileSync(join(root, path))
  const stats = statSync(join(root, path))
  return { mtimeMs: stats.mtimeMs, path, sha1: createHash("sha1").update(content).digest("hex"), size: stats.size }
})
writeFileSync(join(outdir, "manifest.json"), `${JSON.stringify({ entries: ENTRIES, files }, null, 1)}\n`)
console.log(`dist/: ${Object.keys(result.metafile.outputs).length} files from ${inputs.length} modules`)
