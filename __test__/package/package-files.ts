// Static checks of an unpacked package directory: which files its JS and declarations
// import, and which of those are missing. Used by package-install.spec.ts.
import { builtinModules } from "node:module"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"

import { init, parse } from "es-module-lexer"

const PATTERNS = [
  /\b(?:import|export)\s[^;"'`]*?\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\brequire\(\s*["']([^"']+)["']\s*\)/g,
]

/** Every module specifier written in `source`, in order of appearance per pattern. */
export function specifiers(source: string): string[] {
  const found: string[] = []
  for (const pattern of PATTERNS) for (const match of source.matchAll(pattern)) found.push(match[1]!)
  return found
}

const REQUIRE = /\brequire\(\s*["']([^"']+)["']\s*\)/g

/**
 * The module specifiers of an ES module: its static and literal dynamic imports as the
 * es-module-lexer parser reads them (so text in strings and comments that only looks like an
 * import, as in the CLI's loader, is not one), plus literal `require()` calls.
 */
export async function moduleSpecifiers(source: string): Promise<string[]> {
  await init
  const [imports] = parse(source)
  const found = imports.flatMap((entry) => (entry.n === undefined ? [] : [entry.n]))
  for (const match of source.matchAll(REQUIRE)) found.push(match[1]!)
  return found
}

/** All files under `dir`, as paths relative to it. */
export function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? listFiles(path, base) : [relative(base, path)]
  })
}

// The napi loader's local fallbacks (`./aml-jsx-sdk.<triple>.node`, the WASI loader) are
// optional by design: a contributor's checkout has them, an installed package does not.
const OPTIONAL_LOADER_FILE = /^\.\/aml-jsx-sdk\.[\w.-]+\.(?:node|wasm|cjs)$/

export interface ImportProblem {
  file: string
  specifier: string
}

/**
 * Relative imports of the package's `.js` and `.d.ts` files that resolve to no file in
 * `packageDir`, and bare imports that are neither Node built-ins, nor `allowedPackages`, nor
 * the loader's `@aml-jsx/sdk-<triple>` platform packages.
 */
export async function missingImports(packageDir: string, allowedPackages: readonly string[]): Promise<ImportProblem[]> {
  const problems: ImportProblem[] = []
  for (const file of listFiles(packageDir).filter((name) => /\.(?:js|d\.ts)$/.test(name))) {
    const source = readFileSync(join(packageDir, file), "utf8")
    const found = file.endsWith(".d.ts") ? specifiers(source) : await moduleSpecifiers(source)
    for (const specifier of found) {
      if (specifier.startsWith(".")) {
        if (file === join("native", "binding.js") && OPTIONAL_LOADER_FILE.test(specifier)) continue
        const target = join(packageDir, dirname(file), specifier)
        const candidates = file.endsWith(".d.ts") ? [target, target.replace(/\.js$/, ".d.ts")] : [target]
        if (!candidates.some((candidate) => existsSync(candidate))) problems.push({ file, specifier })
      } else {
        const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!
        const builtin = specifier.startsWith("node:") || builtinModules.includes(name)
        const platformPackage = /^@aml-jsx\/sdk-[\w-]+(?:\/package\.json)?$/.test(specifier)
        if (!builtin && !platformPackage && !allowedPackages.includes(name)) problems.push({ file, specifier })
      }
    }
  }
  return problems
}

/** The fenced code block of `language` that first follows `heading` in `markdown`. */
export function readmeBlock(markdown: string, heading: string, language: string): string {
  const at = markdown.indexOf(`\n${heading}\n`)
  if (at < 0) throw new Error(`no heading ${heading} in the Markdown`)
  const fence = "```"
  const start = markdown.indexOf(`${fence}${language}\n`, at)
  const end = markdown.indexOf(`\n${fence}`, start + 1)
  if (start < 0 || end < 0) throw new Error(`no ${language} block after ${heading} in the Markdown`)
  return `${markdown.slice(start + fence.length + language.length + 1, end)}\n`
}

/** Every fenced code block of `language` in the section under `heading` (up to the next heading). */
export function readmeBlocks(markdown: string, heading: string, language: string): string[] {
  const at = markdown.indexOf(`\n${heading}\n`)
  if (at < 0) throw new Error(`no heading ${heading} in the Markdown`)
  const next = markdown.slice(at + heading.length + 2).search(/\n#{1,6} /)
  const section = next < 0 ? markdown.slice(at) : markdown.slice(at, at + heading.length + 2 + next)
  const fence = "```"
  return [...section.matchAll(new RegExp(`${fence}${language}\\n([\\s\\S]*?)\\n${fence}`, "g"))].map((match) => `${match[1]}\n`)
}
