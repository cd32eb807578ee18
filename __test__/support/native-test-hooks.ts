// The addon's test-only entry points (src/boundary/test_hooks.rs). They exist only in builds with the
// `test-hooks` cargo feature (the default; the published addon is built without it) and are
// deliberately absent from the generated loader's export list, so they are read from the
// exports object of the addon the loader actually loaded: the CommonJS module whose
// `primitiveKinds` is the loader's own.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

import { primitiveKinds } from "../../lib/core/native.js"

interface TestHooks {
  panicForTest(message: string): void
  processPanicForTest(): Promise<void>
}

const require = createRequire(import.meta.url)

function loadedAddon(): Record<string, unknown> {
  for (const module of Object.values(require.cache)) {
    const exports = module?.exports as Record<string, unknown> | undefined
    if (exports?.primitiveKinds === primitiveKinds) return exports
  }
  throw new Error("the loaded AML addon is not in the CommonJS module cache")
}

/** The test hooks, or a clear failure when the addon was built without them. */
export function testHooks(): TestHooks {
  const addon = loadedAddon()
  if (typeof addon.panicForTest !== "function" || typeof addon.processPanicForTest !== "function") {
    throw new Error("the loaded AML addon was built without the test-hooks cargo feature (run `npm run build`)")
  }
  return addon as unknown as TestHooks
}

/** Whether `addon` (an addon's exports object) carries any test-only entry point. */
export function hasTestHooks(addon: Record<string, unknown>): boolean {
  return Object.keys(addon).some((name) => name.endsWith("ForTest"))
}

/** `(at src/boundary/test_hooks.rs:<line>:<column>)`: where the hook panics whose body contains `needle`. */
export function hookLocation(needle: string): string {
  const source = readFileSync(new URL("../../src/boundary/test_hooks.rs", import.meta.url), "utf8").split("\n")
  const line = source.findIndex((text) => text.includes(needle))
  if (line < 0) throw new Error(`src/boundary/test_hooks.rs has no line containing ${needle}`)
  return `(at src/boundary/test_hooks.rs:${line + 1}:${source[line]!.indexOf("panic!") + 1})`
}

export const panicForTest = (message: string): void => testHooks().panicForTest(message)
export const processPanicForTest = (): Promise<void> => testHooks().processPanicForTest()
