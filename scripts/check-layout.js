// The layout rules of docs/ARCHITECTURE.md ("Where things live"), checked from the source
// text: no import cycle among the JS modules of the package, no module cycle inside any Rust
// crate, no flat folder of more than 25 files under lib/ or src/, no production file over
// 500 lines. `node scripts/check-layout.js` prints every breach and exits 1 if there is one;
// __test__/layout.spec.ts runs it.
import { existsSync, readFileSync, readdirSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const MAX_FOLDER_FILES = 25
const MAX_LINES = 500

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, out)
    else out.push(path)
  }
  return out
}

/** Strongly connected components of more than one node (Tarjan). */
export function cycles(graph) {
  let next = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (node) => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node), low.get(to)))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)))
    }
    if (low.get(node) === index.get(node)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

// Static imports and re-exports only: a dynamic import() does not order module loading.
const STATIC_IMPORT = /^\s*(?:import|export)\s(?:[^;]*?\sfrom\s*)?["'](\.[^"']+)["']/gm

function jsGraph() {
  const files = ["index.js", ...["lib", "testing", "jsx-runtime", "jsx-dev-runtime", "bin"].flatMap((dir) => walk(join(root, dir)).map((f) => relative(root, f)))]
    .filter((file) => /\.(c|m)?js$/.test(file))
  const graph = new Map()
  for (const file of files) {
    const deps = []
    for (const match of readFileSync(join(root, file), "utf8").matchAll(STATIC_IMPORT)) {
      const target = relative(root, resolve(root, dirname(file), match[1]))
      if (existsSync(join(root, target))) deps.push(target)
    }
    graph.set(file, deps)
  }
  return graph
}

/** `src/a/b.rs` and `src/a/b/mod.rs` → `a::b`; the crate root is left out (a re-export facade). */
function rustModule(srcDir, file) {
  const path = relative(srcDir, file).replace(/\.rs$/, "").split("/")
  if (path.at(-1) === "mod") path.pop()
  if (path.length === 1 && (path[0] === "lib" || path[0] === "main")) return undefined
  return path.join("::")
}

function rustGraph(srcDir) {
  const modules = new Map()
  for (const file of walk(srcDir).filter((f) => f.endsWith(".rs") && !f.endsWith("_tests.rs"))) {
    const name = rustModule(srcDir, file)
    if (name !== undefined) modules.set(name, file)
  }
  const graph = new Map()
  for (const [name, file] of modules) {
    // Inline test modules may reach anywhere; they are not part of the dependency order.
    // Comments (doc links such as [`crate::lock`]) name modules without depending on them.
    const text = readFileSync(file, "utf8")
      .split(/#\[cfg\(test\)\]\s*mod tests\b/)[0]
      .replace(/(^|\s)\/\/[^\n]*/g, "$1")
    const deps = new Set()
    const parent = name.split("::").slice(0, -1)
    const refer = (segments) => {
      for (let n = segments.length; n > 0; n--) {
        const target = segments.slice(0, n).join("::")
        if (modules.has(target)) {
          if (target !== name && !name.startsWith(`${target}::`)) deps.add(target)
          return
        }
      }
    }
    for (const match of text.matchAll(/\b(crate|super)::((?:\w+::)*\w+)/g)) {
      const base = match[1] === "crate" ? [] : parent
      refer([...base, ...match[2].split("::")])
    }
    for (const match of text.matchAll(/\b(crate|super)::\{([^}]*)\}/g)) {
      const base = match[1] === "crate" ? [] : parent
      for (const item of match[2].split(",")) refer([...base, ...item.trim().split(/\s/)[0].split("::")])
    }
    graph.set(name, [...deps])
  }
  return graph
}

export function breaches() {
  const out = []
  for (const cycle of cycles(jsGraph())) out.push(`JS import cycle: ${cycle.join(" ↔ ")}`)
  const crates = [join(root, "src"), ...readdirSync(join(root, "crates")).map((name) => join(root, "crates", name, "src"))]
  for (const srcDir of crates.filter((dir) => existsSync(dir))) {
    for (const cycle of cycles(rustGraph(srcDir))) out.push(`Rust module cycle in ${relative(root, srcDir)}: ${cycle.join(" ↔ ")}`)
  }
  for (const top of ["lib", "src"]) {
    for (const dir of [join(root, top), ...walk(join(root, top)).map(dirname)]) {
      const count = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile()).length
      if (count > MAX_FOLDER_FILES) out.push(`${relative(root, dir)}/ holds ${count} files (at most ${MAX_FOLDER_FILES})`)
    }
  }
  const production = [
    ...["lib", "src", "testing", "bin"].flatMap((dir) => walk(join(root, dir))),
    ...readdirSync(join(root, "crates")).flatMap((name) => walk(join(root, "crates", name, "src"))),
  ].filter((file) => /\.(rs|c?js)$/.test(file) && !/_tests?\.rs$/.test(file))
  for (const file of new Set(production)) {
    const lines = readFileSync(file, "utf8").split("\n").length - 1
    if (lines > MAX_LINES) out.push(`${relative(root, file)} has ${lines} lines (at most ${MAX_LINES})`)
  }
  return [...new Set(out)]
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = breaches()
  for (const line of found) console.log(line)
  console.log(found.length === 0 ? "layout: no cycles, folders and files within bounds" : `layout: ${found.length} breach(es)`)
  process.exitCode = found.length === 0 ? 0 : 1
}
