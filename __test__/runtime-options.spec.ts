// RT-1: AmlRuntime option validation (exact TypeErrors and their order), defaults, option
// capture, and the independence of concurrent evaluations on one runtime.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { AmlRuntime, EvaluationError } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

type Options = Record<string, unknown>

const construct = (options?: Options) => new AmlRuntime(options as never)

function expectTypeError(options: Options, message: string): void {
  expect(() => construct(options)).toThrow(message)
  let caught: unknown
  try {
    construct(options)
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(TypeError)
  expect((caught as Error).constructor).toBe(TypeError)
  expect((caught as Error).message).toBe(message)
}

async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<void> {
  await expect(promise).rejects.toThrow(message)
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(EvaluationError)
  expect((error as Error).name).toBe("EvaluationError")
  expect((error as Error).message).toBe(message)
}

/** A chain of `n` nested component nodes ending in "leaf". */
function Level(props: { readonly n: number }): unknown {
  return props.n > 1 ? jsx(Level, { n: props.n - 1 }) : "leaf"
}
const chain = (n: number) => jsx(Level, { n })

async function Delayed(props: { readonly ms: number; readonly text: string }) {
  await sleep(props.ms)
  return props.text
}

const agentProvider = () => ({ name: "agent", run: async () => ({ text: "" }) })
const sandboxProvider = () => ({ acquire: async () => ({}), name: "sandbox" })
const workspaceProvider = () => ({ acquire: async () => ({}), name: "workspace" })

const LIMITS = ["maxAgentCalls", "maxDepth", "maxConcurrentAgents", "maxTurnsPerAgent", "maxStateTransitions"]

describe("valid construction", () => {
  test("no options, undefined and {} are all accepted", () => {
    expect(construct()).toBeInstanceOf(AmlRuntime)
    expect(construct(undefined)).toBeInstanceOf(AmlRuntime)
    expect(construct({})).toBeInstanceOf(AmlRuntime)
  })

  test("every option with a valid value is accepted", () => {
    const runtime = construct({
      agentProvider: agentProvider(),
      allowedMcpServers: ["docs", "git hub"],
      allowedTools: [],
      cwd: ".",
      maxAgentCalls: 0,
      maxConcurrentAgents: 1,
      maxDepth: Number.MAX_SAFE_INTEGER,
      maxStateTransitions: 3,
      maxTurnsPerAgent: 2,
      onTraceError: () => {},
      sandboxProvider: sandboxProvider(),
      system: "",
      trace: () => {},
      workspaceProvider: workspaceProvider(),
    })
    expect(runtime).toBeInstanceOf(AmlRuntime)
  })

  test("undefined option values mean 'use the default'", () => {
    const options: Options = {}
    for (const name of [
      "trace",
      "onTraceError",
      ...LIMITS,
      "allowedMcpServers",
      "allowedTools",
      "system",
      "agentProvider",
      "sandboxProvider",
      "cwd",
      "workspaceProvider",
    ]) {
      options[name] = undefined
    }
    expect(construct(options)).toBeInstanceOf(AmlRuntime)
  })

  test("an agent provider with a supportsSandbox function is accepted", () => {
    expect(construct({ agentProvider: { ...agentProvider(), supportsSandbox: () => true } })).toBeInstanceOf(
      AmlRuntime,
    )
  })

  test("provider class instances with prototype methods are accepted", () => {
    class Agents {
      readonly name = "class-agent"
      async run() {
        return { text: "" }
      }
    }
    class Sandboxes {
      readonly name = "class-sandbox"
      async acquire() {
        return {}
      }
    }
    expect(construct({ agentProvider: new Agents(), sandboxProvider: new Sandboxes() })).toBeInstanceOf(AmlRuntime)
  })
})

describe("trace and onTraceError", () => {
  test.each([1, "fn", {}, null, true])("trace %j is rejected", (value) => {
    expectTypeError({ trace: value }, "trace must be a function")
  })

  test.each([1, "fn", {}, null, false])("onTraceError %j is rejected", (value) => {
    expectTypeError({ onTraceError: value }, "onTraceError must be a function")
  })
})

describe("limits", () => {
  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ["negative", -1],
    ["non-integer", 1.5],
    ["2**53", 2 ** 53],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["the string '1'", "1"],
    ["a bigint", 1n],
    ["-0.5", -0.5],
  ]

  for (const name of LIMITS) {
    test.each(invalid)(`${name}: %s is rejected`, (_label, value) => {
      expectTypeError({ [name]: value }, `${name} must be a non-negative safe integer`)
    })

    test(`${name}: 0, 1 and Number.MAX_SAFE_INTEGER are accepted`, () => {
      for (const value of [0, 1, Number.MAX_SAFE_INTEGER]) {
        expect(construct({ [name]: value })).toBeInstanceOf(AmlRuntime)
      }
    })
  }
})

describe("allowedTools and allowedMcpServers", () => {
  for (const name of ["allowedTools", "allowedMcpServers"]) {
    test.each(["tool", { length: 0 }, new Set(["a"]), 1, null])(`${name} %j that is not an array is rejected`, (value) => {
      expectTypeError({ [name]: value }, `${name} must be an array`)
    })

    test.each([[[" a"]], [["a "]], [[""]], [[1]], [["ok", "\tx"]], [["ok", null]], [["ok", ["nested"]]]])(
      `${name} with a bad entry %j is rejected`,
      (value) => {
        expectTypeError({ [name]: value }, `${name} entries must be non-empty normalized strings`)
      },
    )

    test(`${name} accepts an empty array and normalized names`, () => {
      expect(construct({ [name]: [] })).toBeInstanceOf(AmlRuntime)
      expect(construct({ [name]: ["a", "b-c", "with inner space"] })).toBeInstanceOf(AmlRuntime)
    })
  }
})

describe("system and cwd", () => {
  test.each([1, null, {}, ["a"], true])("system %j is rejected", (value) => {
    expectTypeError({ system: value }, "system must be a string")
  })

  test("system accepts any string, including empty and untrimmed", () => {
    expect(construct({ system: "" })).toBeInstanceOf(AmlRuntime)
    expect(construct({ system: "  be brief  " })).toBeInstanceOf(AmlRuntime)
  })

  test.each(["", 1, null, {}, true])("cwd %j is rejected", (value) => {
    expectTypeError({ cwd: value }, "cwd must be a non-empty string")
  })

  test("cwd accepts relative and absolute paths", () => {
    expect(construct({ cwd: "relative/dir" })).toBeInstanceOf(AmlRuntime)
    expect(construct({ cwd: "/" })).toBeInstanceOf(AmlRuntime)
  })
})

describe("providers", () => {
  const cases: ReadonlyArray<readonly [string, string, string, () => Options]> = [
    ["agentProvider", "Agent", "run", agentProvider],
    ["sandboxProvider", "Sandbox", "acquire", sandboxProvider],
    ["workspaceProvider", "Workspace", "acquire", workspaceProvider],
  ]

  for (const [option, label, method, valid] of cases) {
    test.each([1, "provider", true, null])(`${option} %j that is not an object is rejected`, (value) => {
      expectTypeError({ [option]: value }, `${label} provider must be an object`)
    })

    test(`${option} with a missing or non-string name is rejected`, () => {
      for (const name of [undefined, "", 1, null, {}]) {
        expectTypeError({ [option]: { ...valid(), name } }, `${label} provider name must be a non-empty string`)
      }
    })

    test(`${option} with an unnormalized name is rejected`, () => {
      for (const name of [" padded", "padded ", "\tx", " "]) {
        expectTypeError({ [option]: { ...valid(), name } }, `${label} provider name must already be normalized`)
      }
    })

    test(`${option} without a ${method} function is rejected`, () => {
      const missing = valid()
      delete missing[method]
      expectTypeError({ [option]: missing }, `${label} provider ${method} must be a function`)
      expectTypeError({ [option]: { ...valid(), [method]: "fn" } }, `${label} provider ${method} must be a function`)
      expectTypeError({ [option]: { ...valid(), [method]: {} } }, `${label} provider ${method} must be a function`)
    })

    test(`${option}: the name is checked before ${method}`, () => {
      expectTypeError({ [option]: { name: " x" } }, `${label} provider name must already be normalized`)
      expectTypeError({ [option]: {} }, `${label} provider name must be a non-empty string`)
    })
  }

  test("agent supportsSandbox that is not a function is rejected", () => {
    for (const supportsSandbox of [true, 1, "yes", {}, null]) {
      expectTypeError(
        { agentProvider: { ...agentProvider(), supportsSandbox } },
        "Agent provider supportsSandbox must be a function when provided",
      )
    }
  })
})

describe("validation order", () => {
  // One invalid value per option, in the documented validation order.
  const ORDER: ReadonlyArray<readonly [string, unknown, string]> = [
    ["trace", 1, "trace must be a function"],
    ["onTraceError", 1, "onTraceError must be a function"],
    ["maxAgentCalls", -1, "maxAgentCalls must be a non-negative safe integer"],
    ["maxDepth", -1, "maxDepth must be a non-negative safe integer"],
    ["maxConcurrentAgents", -1, "maxConcurrentAgents must be a non-negative safe integer"],
    ["maxTurnsPerAgent", -1, "maxTurnsPerAgent must be a non-negative safe integer"],
    ["maxStateTransitions", -1, "maxStateTransitions must be a non-negative safe integer"],
    ["allowedMcpServers", "x", "allowedMcpServers must be an array"],
    ["allowedTools", "x", "allowedTools must be an array"],
    ["system", 1, "system must be a string"],
    ["agentProvider", 1, "Agent provider must be an object"],
    ["sandboxProvider", 1, "Sandbox provider must be an object"],
    ["cwd", "", "cwd must be a non-empty string"],
    ["workspaceProvider", 1, "Workspace provider must be an object"],
  ]

  test.each(ORDER.map(([name], index) => [name, index] as const))(
    "%s is reported when it and every later option are invalid",
    (_name, index) => {
      const options: Options = {}
      // Insert in reverse so property enumeration order cannot explain the result.
      for (let later = ORDER.length - 1; later >= index; later--) {
        const [name, value] = ORDER[later]!
        options[name] = value
      }
      expectTypeError(options, ORDER[index]![2])
    },
  )

  test.each(ORDER.map(([name], index) => [name, index] as const))(
    "%s alone is reported when only it is invalid",
    (_name, index) => {
      const [name, value, message] = ORDER[index]!
      expectTypeError({ [name]: value }, message)
    },
  )

  test("documented examples", () => {
    expectTypeError({ maxDepth: -1, trace: 1 }, "trace must be a function")
    expectTypeError({ maxAgentCalls: 1.5, maxDepth: "1" }, "maxAgentCalls must be a non-negative safe integer")
    expectTypeError({ maxConcurrentAgents: -1, maxDepth: Number.NaN }, "maxDepth must be a non-negative safe integer")
    expectTypeError({ allowedMcpServers: [" a"], allowedTools: "x" }, "allowedMcpServers entries must be non-empty normalized strings")
    expectTypeError({ allowedTools: [""], system: 1 }, "allowedTools entries must be non-empty normalized strings")
    expectTypeError({ agentProvider: { name: " a", run() {} }, system: null }, "system must be a string")
    expectTypeError(
      { agentProvider: { name: "a" }, sandboxProvider: { name: "" } },
      "Agent provider run must be a function",
    )
    expectTypeError({ cwd: "", sandboxProvider: { name: "s" } }, "Sandbox provider acquire must be a function")
    expectTypeError({ cwd: 1, workspaceProvider: 1 }, "cwd must be a non-empty string")
  })
})

describe("defaults", () => {
  test("maxDepth defaults to 16", async () => {
    const runtime = construct()
    expect(await runtime.evaluate(chain(16) as never)).toBe("leaf")
    await expectEvaluationError(runtime.evaluate(chain(17) as never), "AML evaluation exceeded maxDepth 16")
  })

  test("an explicit undefined maxDepth uses the default", async () => {
    const runtime = construct({ maxDepth: undefined })
    expect(await runtime.evaluate(chain(16) as never)).toBe("leaf")
    await expectEvaluationError(runtime.evaluate(chain(17) as never), "AML evaluation exceeded maxDepth 16")
  })

  test("maxDepth 0 means unlimited", async () => {
    const runtime = construct({ maxDepth: 0 })
    expect(await runtime.evaluate(chain(500) as never)).toBe("leaf")
  })

  test("a custom maxDepth is enforced exactly", async () => {
    const runtime = construct({ maxDepth: 5 })
    expect(await runtime.evaluate(chain(5) as never)).toBe("leaf")
    await expectEvaluationError(runtime.evaluate(chain(6) as never), "AML evaluation exceeded maxDepth 5")
  })

  test("a runtime without providers evaluates text", async () => {
    expect(await construct().evaluate("plain" as never)).toBe("plain")
  })
})

describe("options are captured once", () => {
  test("mutating maxDepth after construction has no effect", async () => {
    const options: Options = { maxDepth: 2 }
    const runtime = construct(options)
    options.maxDepth = 0
    await expectEvaluationError(runtime.evaluate(chain(3) as never), "AML evaluation exceeded maxDepth 2")
    options.maxDepth = 100
    await expectEvaluationError(runtime.evaluate(chain(3) as never), "AML evaluation exceeded maxDepth 2")
  })

  test("adding maxDepth after construction has no effect", async () => {
    const options: Options = {}
    const runtime = construct(options)
    options.maxDepth = 1
    expect(await runtime.evaluate(chain(16) as never)).toBe("leaf")
  })

  test("replacing trace after construction has no effect", async () => {
    const original = vi.fn()
    const replacement = vi.fn()
    const options: Options = { trace: original }
    const runtime = construct(options)
    options.trace = replacement
    expect(await runtime.evaluate(chain(2) as never)).toBe("leaf")
    expect(original).toHaveBeenCalled()
    expect(replacement).not.toHaveBeenCalled()
  })

  test("making options invalid after construction does not throw later", async () => {
    const options: Options = { maxDepth: 3, system: "s" }
    const runtime = construct(options)
    options.maxDepth = -1
    options.system = 42
    options.trace = "not a function"
    expect(await runtime.evaluate(chain(3) as never)).toBe("leaf")
  })

  test("each option is read exactly once during construction", () => {
    const values: Options = {
      agentProvider: agentProvider(),
      allowedMcpServers: ["docs"],
      allowedTools: ["read"],
      cwd: ".",
      maxAgentCalls: 1,
      maxConcurrentAgents: 1,
      maxDepth: 1,
      maxStateTransitions: 1,
      maxTurnsPerAgent: 1,
      onTraceError: () => {},
      sandboxProvider: sandboxProvider(),
      system: "s",
      trace: () => {},
      workspaceProvider: workspaceProvider(),
    }
    const reads = new Map<string, number>()
    const options = {}
    for (const [name, value] of Object.entries(values)) {
      Object.defineProperty(options, name, {
        enumerable: true,
        get() {
          reads.set(name, (reads.get(name) ?? 0) + 1)
          return value
        },
      })
    }
    construct(options)
    expect(Object.fromEntries(reads)).toEqual(Object.fromEntries(Object.keys(values).map((name) => [name, 1])))
    // No further reads after construction.
    construct({})
    expect([...reads.values()].every((count) => count === 1)).toBe(true)
  })

  test("a getter that changes its answer cannot smuggle an invalid value past validation", () => {
    let system = 0
    const options = {
      get system() {
        system++
        return system === 1 ? "valid" : 42
      },
    }
    expect(construct(options)).toBeInstanceOf(AmlRuntime)
    expect(system).toBe(1)
  })

  test("the trace option is a runtime-wide trace listener", async () => {
    const events: Array<{ type: string; kind?: string; name: string; runId: string }> = []
    const runtime = construct({ trace: (event: never) => events.push(event) })
    expect(await runtime.evaluate(chain(1) as never)).toBe("leaf")
    const first = events.length
    expect(events.some((event) => event.type === "span.start" && event.kind === "evaluation")).toBe(true)
    expect(events.some((event) => event.type === "span.start" && event.kind === "component" && event.name === "Level")).toBe(
      true,
    )
    expect(await runtime.evaluate("again" as never)).toBe("again")
    expect(events.length).toBeGreaterThan(first)
    expect(new Set(events.map((event) => event.runId)).size).toBe(2)
  })
})

describe("concurrent evaluations on one runtime", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

  test("each evaluate() call has its own runId and result", async () => {
    const runtime = construct()
    const starts: string[] = []
    const finishes: Array<{ runId: string; status: string }> = []
    runtime.on("start", (event: { runId: string }) => {
      starts.push(event.runId)
    })
    runtime.on("finish", (event: { runId: string; status: string }) => {
      finishes.push({ runId: event.runId, status: event.status })
    })
    const results = await Promise.all([
      runtime.evaluate(jsx(Delayed, { ms: 30, text: "slow" }) as never),
      runtime.evaluate(jsx(Delayed, { ms: 1, text: "fast" }) as never),
      runtime.evaluate(jsx(Delayed, { ms: 10, text: "middle" }) as never),
    ])
    expect(results).toEqual(["slow", "fast", "middle"])
    expect(starts).toHaveLength(3)
    expect(new Set(starts).size).toBe(3)
    for (const runId of starts) expect(runId).toMatch(UUID)
    expect(finishes.map((finish) => finish.status)).toEqual(["ok", "ok", "ok"])
    expect(new Set(finishes.map((finish) => finish.runId))).toEqual(new Set(starts))
  })

  test("a failing evaluation does not affect a concurrent one", async () => {
    const runtime = construct({ maxDepth: 3 })
    const statuses = new Map<string, string>()
    runtime.on("finish", (event: { runId: string; status: string }) => {
      statuses.set(event.runId, event.status)
    })
    async function SlowChain(props: { readonly n: number }): Promise<unknown> {
      await sleep(2)
      return props.n > 1 ? jsx(SlowChain, { n: props.n - 1 }) : "done"
    }
    const [failed, succeeded] = await Promise.allSettled([
      runtime.evaluate(jsx(SlowChain, { n: 4 }) as never),
      runtime.evaluate(jsx(SlowChain, { n: 3 }) as never),
    ])
    expect(failed.status).toBe("rejected")
    expect((failed as PromiseRejectedResult).reason).toBeInstanceOf(EvaluationError)
    expect((failed as PromiseRejectedResult).reason.message).toBe("AML evaluation exceeded maxDepth 3")
    expect(succeeded).toEqual({ status: "fulfilled", value: "done" })
    expect([...statuses.values()].sort()).toEqual(["error", "ok"])
  })

  test("the same node tree evaluated concurrently does not trip cycle detection", async () => {
    const runtime = construct()
    const shared = jsx(Delayed, { ms: 5, text: "x" })
    const tree = [shared, "-", shared]
    expect(await Promise.all([runtime.evaluate(tree as never), runtime.evaluate(tree as never)])).toEqual([
      "x-x",
      "x-x",
    ])
  })
})
