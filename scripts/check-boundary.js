// The boundary rule of docs/ARCHITECTURE.md: every `#[napi]` function of the binding runs its
// body inside `guard()` (src/boundary/guard.rs), or hands it to `spawn_promise`, which guards
// both halves (directly or through a helper of the same file that does), so a Rust panic
// becomes a JS error and never unwinds into Node.
// `node scripts/check-boundary.js` lists the functions that do not; __test__/boundary-guard.spec.ts
// runs it.
import { readFileSync, readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, out)
    else if (path.endsWith(".rs")) out.push(path)
  }
  return out
}

/** The body of the function whose opening brace is at `open`. */
function body(text, open) {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++
    else if (text[i] === "}" && --depth === 0) return text.slice(open, i + 1)
  }
  return text.slice(open)
}

const NAPI_FN = /#\[napi(?:\([^\]]*\))?\]\s*\n\s*pub (?:async )?fn (\w+)[^{;]*\{/g
const ANY_FN = /\bfn (\w+)(?:<[^>]*>)?\([^{;]*\{/g
const GUARDED = /\bguard\(|\bspawn_promise\(/

/**
 * Helpers of one file that guard what they are handed (they call `guard`/`spawn_promise`, or
 * another such helper), so an entry point that delegates to one is guarded too.
 */
function guardingHelpers(text) {
  const bodies = new Map()
  for (const match of text.matchAll(ANY_FN)) bodies.set(match[1], body(text, match.index + match[0].length - 1))
  const helpers = new Set()
  for (let changed = true; changed; ) {
    changed = false
    for (const [name, code] of bodies) {
      if (helpers.has(name)) continue
      if (GUARDED.test(code) || [...helpers].some((helper) => new RegExp(`\\b${helper}\\(`).test(code))) {
        helpers.add(name)
        changed = true
      }
    }
  }
  return helpers
}

export function unguarded() {
  const out = []
  let total = 0
  for (const file of walk(join(root, "src"))) {
    const text = readFileSync(file, "utf8")
    const helpers = guardingHelpers(text)
    for (const match of text.matchAll(NAPI_FN)) {
      total++
      const code = body(text, match.index + match[0].length - 1)
      const delegated = [...helpers].some((helper) => helper !== match[1] && new RegExp(`\\b${helper}\\(`).test(code))
      if (!GUARDED.test(code) && !delegated) out.push(`${relative(root, file)} ${match[1]}`)
    }
  }
  return { total, unguarded: out }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { total, unguarded: list } = unguarded()
  for (const line of list) console.log(line)
  console.log(`${total} #[napi] functions, ${list.length} outside guard()`)
  process.exitCode = list.length === 0 ? 0 : 1
}
