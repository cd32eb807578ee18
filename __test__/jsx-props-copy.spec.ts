// JSX-1: a node's props are exactly the copy `{ ...props }` makes, frozen. lib/core/node.js builds
// it as `{ __proto__: %Object.prototype%, ...props }` so that V8 keeps one map per props shape
// (a spread clone's map cannot hold the frozen transition); these tests pin the semantics
// against the spread itself and the shared map in a child process with V8 natives.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { describe, expect, test } from "vitest"

import { jsx } from "@aml-jsx/sdk/jsx-runtime"

function Text() {
  return "text"
}

/** Every trap a Proxy over `target` sees while `copy` runs, in order. */
function trapLog(target: object, copy: (value: object) => unknown): string[] {
  const log: string[] = []
  const proxy = new Proxy(target, {
    get(t, key, receiver) {
      log.push(`get ${String(key)}`)
      return Reflect.get(t, key, receiver)
    },
    getOwnPropertyDescriptor(t, key) {
      log.push(`gopd ${String(key)}`)
      return Reflect.getOwnPropertyDescriptor(t, key)
    },
    ownKeys(t) {
      log.push("ownKeys")
      return Reflect.ownKeys(t)
    },
  })
  copy(proxy)
  return log
}

describe("node props copy", () => {
  test("own enumerable string and symbol keys are copied in order; others are not", () => {
    const symbol = Symbol("s")
    const base = { inherited: 1 }
    const input = Object.create(base, {
      b: { enumerable: true, value: 2 },
      hidden: { enumerable: false, value: 3 },
    })
    input.a = 1
    input[symbol] = 4
    input[2] = "two"
    const props = jsx(Text, input).props as Record<PropertyKey, unknown>
    expect(Reflect.ownKeys(props)).toEqual(Reflect.ownKeys({ ...input }))
    expect(Reflect.ownKeys(props)).toEqual(["2", "b", "a", symbol])
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype)
    expect("inherited" in props).toBe(false)
  })

  test("an own __proto__ key stays an own data property and the prototype is unchanged", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')
    const props = jsx(Text, input).props as Record<string, unknown>
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype)
    expect(Object.getOwnPropertyNames(props)).toEqual(["__proto__", "a"])
    expect(Object.getOwnPropertyDescriptor(props, "__proto__")?.value).toEqual({ polluted: true })
    expect((props as { polluted?: boolean }).polluted).toBeUndefined()
  })

  test("getters run once and become data; a Proxy sees the same traps as a spread", () => {
    let reads = 0
    const input = {
      get lazy() {
        reads++
        return "value"
      },
    }
    const props = jsx(Text, input).props
    expect(reads).toBe(1)
    expect(Object.getOwnPropertyDescriptor(props, "lazy")).toEqual({
      configurable: false,
      enumerable: true,
      value: "value",
      writable: false,
    })
    const target = { a: 1, [Symbol.for("k")]: 2, b: 3 }
    expect(trapLog(target, (value) => jsx(Text, value))).toEqual(trapLog(target, (value) => ({ ...value })))
  })

  test("a setter on Object.prototype is not invoked (properties are defined, not set)", () => {
    let calls = 0
    Object.defineProperty(Object.prototype, "amlTrap", {
      configurable: true,
      set() {
        calls++
      },
    })
    try {
      const props = jsx(Text, { amlTrap: 1 }).props as Record<string, unknown>
      expect(calls).toBe(0)
      expect(Object.getOwnPropertyDescriptor(props, "amlTrap")?.value).toBe(1)
    } finally {
      delete (Object.prototype as Record<string, unknown>).amlTrap
    }
  })

  test("nodes of one props shape share one frozen props map (V8)", () => {
    const runtime = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))
    const script = `
      const { jsx } = await import(${JSON.stringify(runtime)})
      const T = () => ""
      const nodes = Array.from({ length: 200 }, (_, i) => jsx(T, { children: "task " + i }))
      console.log(JSON.stringify([%HaveSameMap(nodes[100].props, nodes[199].props), Object.isFrozen(nodes[199].props)]))
    `
    const result = spawnSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script], {
      encoding: "utf8",
    })
    expect(result.stderr).toBe("")
    expect(JSON.parse(result.stdout)).toEqual([true, true])
  })
})
