// The boundary rule of docs/ARCHITECTURE.md: no code of a `#[napi]` function runs outside
// `guard()` (src/boundary/guard.rs) or `spawn_promise` (which guards both of its halves), so a
// Rust panic becomes a JS error and never unwinds into Node.
//
// Containing a guarded call is not enough: a statement before it (a handle lookup, a parse)
// would run unguarded. So the body is read statement by statement, and each one must be
//   - a guarded call: `guard`, `spawn_promise`, or a helper of the same file whose own body
//     passes this check (it delegates again), optionally bound with `let` and followed by `?`;
//   - or inert: it binds or passes only futures and closures (`async move { … }`, `move || …`),
//     `Ok`/`Some` of those, calls of an `async fn` of the same file (calling one runs nothing until it is awaited,
//     and it is awaited inside the guarded call), names and literals.
// Arguments of a call must be inert too, since they are evaluated before the call.
// `node scripts/check-boundary.js` lists the functions that break this; __test__/boundary-guard.spec.ts
// runs it, and shows that it finds code placed before a guarded call.
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

/** Comments and string/char contents blanked (same length), so brackets inside them do not count. */
function blank(text) {
  return text
    .replace(/\/\/[^\n]*/g, (c) => " ".repeat(c.length))
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/"(?:\\.|[^"\\])*"/g, (s) => `"${" ".repeat(s.length - 2)}"`)
    .replace(/'(?:\\.|[^'\\])'/g, (s) => `'${" ".repeat(s.length - 2)}'`)
}

/** The body (without its braces) of the block whose opening brace is at `open`. */
function block(text, open) {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++
    else if (text[i] === "}" && --depth === 0) return text.slice(open + 1, i)
  }
  return text.slice(open + 1)
}

/** `text` cut at `separator` wherever no bracket is open. */
function split(text, separator) {
  const parts = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "(" || c === "[" || c === "{") depth++
    else if (c === ")" || c === "]" || c === "}") depth--
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts.map((part) => part.trim()).filter((part) => part !== "")
}

const NAPI_FN = /#\[napi(?:\([^\]]*\))?\]\s*\n\s*pub (?:async )?fn (\w+)[^{;]*\{/g
const ANY_FN = /\b(async )?fn (\w+)(?:<[^>]*>)?\([^{;]*\{/g
const GUARDS = new Set(["guard", "spawn_promise"])
/** Constructors that only wrap their argument. */
const WRAPPERS = new Set(["Ok", "Some"])
/** A future or closure expression: building it runs nothing. */
const DEFERRED = /^(?:async(?: move)?\s*\{|move\s*\||\|)/
/** A name, a reference to one, or a literal. */
const PLAIN = /^(?:&?(?:mut )?[A-Za-z_][\w.:]*|"\s*"|-?\d[\w.]*|true|false|None)$/

/** Arguments split at commas, with a closure's parameter list (`|a, b|`) put back together. */
function closures(parts) {
  const out = []
  for (const part of parts) {
    const previous = out.at(-1)
    const open = previous !== undefined && /^(?:move\s*)?\|/.test(previous) && (previous.match(/\|/g) ?? []).length === 1
    if (open) out[out.length - 1] = `${previous}, ${part}`
    else out.push(part)
  }
  return out
}

/** `callee(args)` with a plain path as callee and nothing after the closing parenthesis. */
function call(expression) {
  const match = /^((?:[A-Za-z_]\w*::)*([A-Za-z_]\w*))\s*(?:::<[^>]*>)?\(/.exec(expression)
  if (!match) return undefined
  const open = match[0].length - 1
  let depth = 0
  for (let i = open; i < expression.length; i++) {
    if (expression[i] === "(") depth++
    else if (expression[i] === ")" && --depth === 0) {
      if (expression.slice(i + 1).trim() !== "") return undefined
      return { args: closures(split(expression.slice(open + 1, i), ",")), name: match[2] }
    }
  }
  return undefined
}

/** Judges one file's functions: which are guarded entries (safe to delegate to), which async. */
function reader(text) {
  const functions = new Map()
  for (const match of text.matchAll(ANY_FN)) {
    functions.set(match[2], { async: Boolean(match[1]), body: block(text, match.index + match[0].length - 1) })
  }
  const isAsync = (name) => functions.get(name)?.async === true
  const inert = (expression) =>
    DEFERRED.test(expression) ||
    PLAIN.test(expression) ||
    (() => {
      const c = call(expression)
      return c !== undefined && (isAsync(c.name) || WRAPPERS.has(c.name)) && c.args.every(inert)
    })()

  /** Whether `statement` (no trailing `;`) is "guarded" (a guarded call), "inert", or neither. */
  function kind(statement, guarded) {
    const expression = statement
      .replace(/^let\s+(?:mut\s+)?[^=]*?=(?!=)\s*/, "")
      .replace(/\?$/, "")
      .trim()
    if (inert(expression)) return "inert"
    const c = call(expression)
    if (c && (GUARDS.has(c.name) || guarded.has(c.name)) && c.args.every(inert)) return "guarded"
    return undefined
  }

  /** True when every statement of `body` is guarded or inert and at least one is guarded. */
  function passes(body, guarded) {
    const statements = split(body, ";")
    const kinds = statements.map((statement) => kind(statement, guarded))
    return kinds.every(Boolean) && kinds.includes("guarded")
  }

  // Helpers that pass on their own, found to a fixed point (a helper may delegate to another).
  const guarded = new Set()
  for (let changed = true; changed; ) {
    changed = false
    for (const [name, fn] of functions) {
      if (!guarded.has(name) && passes(fn.body, guarded)) {
        guarded.add(name)
        changed = true
      }
    }
  }
  return (body, self) => passes(body, new Set([...guarded].filter((name) => name !== self)))
}

/** The `#[napi]` functions of `text` (Rust source) whose bodies break the rule. */
export function unguardedIn(text) {
  const source = blank(text)
  const passes = reader(source)
  const out = []
  let total = 0
  for (const match of source.matchAll(NAPI_FN)) {
    total++
    if (!passes(block(source, match.index + match[0].length - 1), match[1])) out.push(match[1])
  }
  return { total, unguarded: out }
}

export function unguarded() {
  const out = []
  let total = 0
  for (const file of walk(join(root, "src"))) {
    const found = unguardedIn(readFileSync(file, "utf8"))
    total += found.total
    for (const name of found.unguarded) out.push(`${relative(root, file)} ${name}`)
  }
  return { total, unguarded: out }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { total, unguarded: list } = unguarded()
  for (const line of list) console.log(line)
  console.log(`${total} #[napi] functions, ${list.length} with code outside guard()`)
  process.exitCode = list.length === 0 ? 0 : 1
}
