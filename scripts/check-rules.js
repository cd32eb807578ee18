// docs/ARCHITECTURE.md's "one implementation per rule", checked where a second copy has a
// recognisable shape: each rule below names the one file that implements it and a pattern
// that an inline copy would match. `node scripts/check-rules.js` lists copies found elsewhere;
// __test__/single-rule.spec.ts runs it.
import { readFileSync, readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

export const RULES = [
  {
    rule: "normalized string (JS)",
    home: ["lib/checks/normalized.js"],
    dirs: ["lib", "testing", "restate", "bin"],
    ext: ".js",
    // `x === x.trim()` / `x !== x.trim()`: the comparison that defines the rule.
    pattern: /\b([\w.]+) [!=]== \1\.trim\(\)/,
  },
  {
    rule: "normalized string (Rust)",
    home: ["crates/aml-text/src/lib.rs"],
    dirs: ["crates", "src"],
    ext: ".rs",
    // Rust's own `trim` compared with the value: a different white-space set from JavaScript's.
    pattern: /\b(\w+) == \1\.trim\(\)|\.trim\(\) == \w+\b/,
  },
  {
    rule: "plain options record (JS)",
    home: ["lib/checks/shapes.js"],
    dirs: ["lib", "testing"],
    ext: ".js",
    pattern: /typeof (\w+) === "object" && \1 !== null && !Array\.isArray\(\1\)/,
  },
  {
    rule: "timer-safe delay bound (JS)",
    home: ["lib/checks/timer-delay.js"],
    dirs: ["lib", "testing"],
    ext: ".js",
    pattern: /2 \*\* 31 - 1|2147483647/,
  },
  {
    rule: "guest process-group kill",
    home: ["lib/sandbox/guest-group.js"],
    dirs: ["lib"],
    ext: ".js",
    pattern: /kill -s KILL -- -|kill -KILL -- -|\/proc\/\$\$\/stat/,
  },
  {
    rule: "AML_*_MS environment setting (Rust)",
    home: ["crates/aml-text/src/lib.rs"],
    dirs: ["crates", "src"],
    ext: ".rs",
    // A millisecond setting parsed in place instead of through `aml_text::env_millis`.
    pattern: /env::var\([^)]*_MS/,
  },
  {
    rule: "Sandbox maxOutputBytes option",
    home: ["lib/sandbox/options.js"],
    dirs: ["lib"],
    ext: ".js",
    pattern: /maxOutputBytes must be a positive safe integer|options\.maxOutputBytes \?\?/,
  },
  {
    rule: "optional peer import",
    home: ["lib/core/optional-peer.js"],
    dirs: ["lib"],
    ext: ".js",
    // A memoised `import()` of a peer written in place (its failure must not be memoised).
    pattern: /\?\?= import\(/,
  },
  {
    rule: "ACP launch file path (JS)",
    home: [],
    dirs: ["lib"],
    ext: ".js",
    // The segment test of aml_acp::path_problem, re-written in JavaScript.
    pattern: /segment !== "" && segment !== "\."/,
  },
  {
    rule: "absent object on a file system store (Rust)",
    home: ["crates/aml-workspace/src/error.rs"],
    dirs: ["crates/aml-workspace/src"],
    ext: ".rs",
    pattern: /NotFound \| (io::|std::io::)?ErrorKind::NotADirectory/,
  },
]

function walk(dir, ext, out = []) {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return out
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "target") walk(path, ext, out)
    } else if (path.endsWith(ext)) out.push(path)
  }
  return out
}

/** Lines that copy a rule outside its home: `file:line rule`. */
export function copies(rules = RULES) {
  const found = []
  for (const { dirs, ext, home, pattern, rule } of rules) {
    for (const dir of dirs) {
      for (const file of walk(join(root, dir), ext)) {
        const name = relative(root, file)
        if (home.includes(name)) continue
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, index) => {
            if (!line.trimStart().startsWith("//") && pattern.test(line)) found.push(`${name}:${index + 1} ${rule}`)
          })
      }
    }
  }
  return found
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = copies()
  for (const line of found) console.log(line)
  console.log(`${RULES.length} rules, ${found.length} copies outside their home`)
  process.exitCode = found.length === 0 ? 0 : 1
}
