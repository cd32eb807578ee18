// Bad input found by probing (issue 8 §3): array-likes with a bad length, hand-built nodes
// without props, deep synchronous evaluate() chains and long arrays under cancellation.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { expectEvaluationError, rejection } from "./support/errors.js"

const INVALID_LENGTH = "AML cannot render an array whose length is not an integer from 0 to 4294967295"
const INVALID_PROPS = "AML element props must be an object"

/** An array whose `length` reads as `length` (a Proxy passes Array.isArray). */
function withLength(length: unknown, elements: unknown[] = ["a", "b", "c"]) {
  return new Proxy(elements, {
    get(target, key, receiver) {
      if (key === "length") return length
      return Reflect.get(target, key, receiver)
    },
  })
}

describe("array-likes with a bad length", () => {
  for (const length of [-1, 4294967296, 4294967297, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "3", null, true, undefined, 3n]) {
    it(`length ${String(length)} is an EvaluationError before anything crosses`, async () => {
      await expectEvaluationError(new AmlRuntime().evaluate(withLength(length) as any), INVALID_LENGTH)
    })
  }

  it("a valid length through a Proxy is read once and rendered", async () => {
    let reads = 0
    const proxy = new Proxy(["a", "b"], {
      get(target, key, receiver) {
        if (key === "length") reads++
        return Reflect.get(target, key, receiver)
      },
    })
    await expect(new AmlRuntime().evaluate(proxy as any)).resolves.toBe("ab")
    expect(reads).toBe(1)
  })

  it("the failure closes the enclosing spans with the error", async () => {
    const runtime = new AmlRuntime()
    const ends: any[] = []
    runtime.on("trace", (event: any) => {
      if (event.type === "span.end") ends.push(event)
    })
    function Holder() {
      return withLength(-1)
    }
    await expectEvaluationError(runtime.evaluate(<Holder />), INVALID_LENGTH)
    expect(ends.map((event) => [event.name, event.status, event.attributes["error.type"]])).toEqual([
      ["Holder", "error", "EvaluationError"],
      ["evaluate", "error", "EvaluationError"],
    ])
  })
})

describe("a long array stays interruptible", () => {
  it("a sparse 10,000,000-element array stops at the caller's abort", async () => {
    const controller = new AbortController()
    const reason = new Error("abort at 50 ms")
    const timer = setTimeout(() => controller.abort(reason), 50)
    try {
      const error = await rejection(new AmlRuntime().evaluate(new Array(1e7), { signal: controller.signal }))
      expect(error).toBe(reason)
    } finally {
      clearTimeout(timer)
    }
  })

  it("without a signal the same array evaluates to the empty string", async () => {
    await expect(new AmlRuntime().evaluate(new Array(100_000))).resolves.toBe("")
  })
})

describe("hand-built nodes without props", () => {
  const node = (type: unknown, props: unknown) => ({ $$typeof: Symbol.for("@aml-jsx/sdk/node"), props, type })

  for (const props of [null, undefined, 7, "p"]) {
    it(`props ${String(props)} on a primitive and on a component: ${INVALID_PROPS}`, async () => {
      const provider = { name: "p", run: async () => ({ text: "t" }) }
      const component = () => "never"
      await expectEvaluationError(new AmlRuntime({ agentProvider: provider }).evaluate(node(Agent, props) as any), INVALID_PROPS)
      await expectEvaluationError(new AmlRuntime().evaluate(node(component, props) as any), INVALID_PROPS)
    })
  }

  it("the node brand is the one jsx() uses", () => {
    expect(jsx("x" as any, {}).$$typeof).toBe(Symbol.for("@aml-jsx/sdk/node"))
  })
})

describe("a synchronous component chain calling evaluate() 1,000 levels deep", () => {
  it("evaluates without overflowing the JS stack", async () => {
    function Level({ n }: { n: number }): unknown {
      return n === 0 ? "bottom" : evaluate(<Level n={n - 1} />)
    }
    await expect(new AmlRuntime({ maxDepth: 0 }).evaluate(<Level n={1000} />)).resolves.toBe("bottom")
  })

  it("prints nothing on stderr (no V8 PromiseRejectCallback exception), also when it fails", () => {
    const script = `
      import { AmlRuntime, evaluate } from "@aml-jsx/sdk"
      import { jsx } from "@aml-jsx/sdk/jsx-runtime"
      function Level({ n }) { return n === 0 ? "bottom" : evaluate(jsx(Level, { n: n - 1 })) }
      function Failing({ n }) { if (n === 0) throw new Error("at the bottom"); return evaluate(jsx(Failing, { n: n - 1 })) }
      const ok = await new AmlRuntime({ maxDepth: 0 }).evaluate(jsx(Level, { n: 1000 }))
      const failed = await new AmlRuntime({ maxDepth: 0 }).evaluate(jsx(Failing, { n: 1000 })).catch((e) => e.message)
      const limited = await new AmlRuntime().evaluate(jsx(Level, { n: 1000 })).catch((e) => e.name + ": " + e.message)
      console.log(JSON.stringify([ok, failed, limited]))
    `
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
    })
    expect(child.stderr).toBe("")
    expect(JSON.parse(child.stdout)).toEqual([
      "bottom",
      "at the bottom",
      "EvaluationError: AML evaluation exceeded maxDepth 16",
    ])
  })
})
