// <Agent> props (INVENTORY AG-1, PA-2): prop errors raised when the node is entered, provider
// selection and validation of the provider prop, and the permissions passed to the provider.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, evaluate } from "@aml-jsx/sdk"

import { expectEvaluationError, expectTypeError, recorder } from "./support/agent.js"
import { ONLY_ACTIVE } from "./support/errors.js"

describe("AG-1 prop errors, raised when the node is entered and before its children", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["model number", { model: 42 }, "<Agent> model must be a string"],
    ["model object", { model: { id: "m" } }, "<Agent> model must be a string"],
    ["system number", { system: 1 }, "<Agent> system must be a string"],
    ["system array", { system: ["a"] }, "<Agent> system must be a string"],
    ["permissions string", { permissions: "read-only" }, "<Agent> permissions must be an object"],
    ["permissions number", { permissions: 7 }, "<Agent> permissions must be an object"],
    ["permissions boolean", { permissions: true }, "<Agent> permissions must be an object"],
    [
      "permissions.filesystem",
      { permissions: { filesystem: "write" } },
      '<Agent> permissions.filesystem must be "read-only" or "read-write"',
    ],
    [
      "permissions.filesystem boolean",
      { permissions: { filesystem: true } },
      '<Agent> permissions.filesystem must be "read-only" or "read-write"',
    ],
    ["permissions.network", { permissions: { network: "yes" } }, "<Agent> permissions.network must be a boolean"],
    ["permissions.shell", { permissions: { shell: 1 } }, "<Agent> permissions.shell must be a boolean"],
    ["cwd without Sandbox", { cwd: "src" }, "<Agent> cwd requires an enclosing <Sandbox>"],
  ]

  for (const [label, props, message] of cases) {
    test(`${label}: ${message}`, async () => {
      const { calls, provider } = recorder()
      const child = vi.fn(() => "child text")
      const Child = child as any
      const AgentAny = Agent as any
      await expectEvaluationError(
        new AmlRuntime({ agentProvider: provider }).evaluate(
          <AgentAny {...props}>
            <Child />
          </AgentAny>,
        ),
        message,
      )
      expect(child).not.toHaveBeenCalled()
      expect(calls).toEqual([])
    })
  }

  test("model and system errors are checked before permissions", async () => {
    const AgentAny = Agent as any
    await expectEvaluationError(
      new AmlRuntime().evaluate(<AgentAny model={1} permissions="x" />),
      "<Agent> model must be a string",
    )
    await expectEvaluationError(
      new AmlRuntime().evaluate(<AgentAny system={1} permissions="x" />),
      "<Agent> system must be a string",
    )
  })
})

describe("provider selection and PA-2 validation of the provider prop", () => {
  const invalid: [string, unknown, string][] = [
    ["a number", 5, "Agent provider must be an object"],
    ["a string", "p", "Agent provider must be an object"],
    ["no name", { run() {} }, "Agent provider name must be a non-empty string"],
    ["an empty name", { name: "", run() {} }, "Agent provider name must be a non-empty string"],
    ["a non-string name", { name: 3, run() {} }, "Agent provider name must be a non-empty string"],
    ["an unnormalized name", { name: " p ", run() {} }, "Agent provider name must already be normalized"],
    ["no run", { name: "p" }, "Agent provider run must be a function"],
    ["a non-function run", { name: "p", run: "go" }, "Agent provider run must be a function"],
    [
      "a non-function supportsSandbox",
      { name: "p", run() {}, supportsSandbox: true },
      "Agent provider supportsSandbox must be a function when provided",
    ],
  ]

  for (const [label, provider, message] of invalid) {
    test(`a provider prop with ${label} rejects with TypeError "${message}" before children`, async () => {
      const child = vi.fn(() => "x")
      const Child = child as any
      const AgentAny = Agent as any
      await expectTypeError(
        new AmlRuntime().evaluate(
          <AgentAny provider={provider}>
            <Child />
          </AgentAny>,
        ),
        message,
      )
      expect(child).not.toHaveBeenCalled()
    })
  }

  test("the prop provider wins over the runtime default, for that Agent only", async () => {
    const runtimeDefault = recorder("default")
    const prop = recorder("prop")
    const result = await new AmlRuntime({ agentProvider: runtimeDefault.provider }).evaluate(
      <Agent provider={prop.provider}>
        outer <Agent>inner</Agent>
      </Agent>,
    )
    expect(result).toBe("[prop:outer [default:inner]]")
    expect(runtimeDefault.calls.map((c) => c.request.prompt)).toEqual(["inner"])
    expect(prop.calls.map((c) => c.request.prompt)).toEqual(["outer [default:inner]"])
  })

  test("run is called with the provider object as this, and its members are read once", async () => {
    let nameReads = 0
    let runReads = 0
    const calls: unknown[] = []
    const provider = {
      get name() {
        nameReads++
        return "counted"
      },
      get run() {
        runReads++
        return async function (this: unknown) {
          calls.push(this)
          return { text: "ok" }
        }
      },
    }
    expect(await new AmlRuntime().evaluate(<Agent provider={provider as any}>x</Agent>)).toBe("ok")
    expect(calls).toEqual([provider])
    expect(nameReads).toBe(1)
    expect(runReads).toBe(1)
  })

  test("the provider prop is read with component evaluation masked", async () => {
    const seen: unknown[] = []
    const provider = {
      get name() {
        try {
          evaluate("x")
          seen.push("evaluate() was available")
        } catch (error) {
          seen.push(error)
        }
        return "masked"
      },
      async run() {
        return { text: "done" }
      },
    }
    async function Caller() {
      return await evaluate(<Agent provider={provider}>x</Agent>)
    }
    expect(await new AmlRuntime().evaluate(<Caller />)).toBe("done")
    expect(seen).toHaveLength(1)
    expect(seen[0]).toBeInstanceOf(EvaluationError)
    expect((seen[0] as Error).message).toBe(ONLY_ACTIVE)
  })

  test("`Agent span-1 has no provider` is raised after the children resolved", async () => {
    const child = vi.fn(() => "child ran")
    const Child = child as any
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <Agent>
          <Child />
        </Agent>,
      ),
      "Agent span-1 has no provider",
    )
    expect(child).toHaveBeenCalledTimes(1)
  })

  test("a child Agent with its own provider runs before the parent fails for lack of one", async () => {
    const inner = recorder("inner")
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <Agent>
          <Agent provider={inner.provider}>child</Agent>
        </Agent>,
      ),
      "Agent span-1 has no provider",
    )
    expect(inner.calls).toHaveLength(1)
    expect(inner.calls[0].request.trace.spanId).toBe("span-2")
  })

  test("the no-provider error names the Agent's own span", async () => {
    const { provider } = recorder()
    await expectEvaluationError(
      new AmlRuntime().evaluate(
        <>
          <Agent provider={provider}>first</Agent>
          <Agent>second</Agent>
        </>,
      ),
      "Agent span-2 has no provider",
    )
  })
})

describe("permissions", () => {
  const DEFAULTS = { filesystem: "read-write", network: true, shell: true }

  test("defaults to read-write filesystem, network and shell, frozen", async () => {
    const { calls, provider } = recorder()
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent>x</Agent>)
    const permissions = calls[0].request.permissions
    expect(permissions).toEqual(DEFAULTS)
    expect(Object.keys(permissions).sort()).toEqual(["filesystem", "network", "shell"])
    expect(Object.isFrozen(permissions)).toBe(true)
  })

  test("overrides apply over the defaults and the result is frozen and detached from the prop", async () => {
    const { calls, provider } = recorder()
    const runtime = new AmlRuntime({ agentProvider: provider })
    const overrides: any = { filesystem: "read-only" }
    await runtime.evaluate(<Agent permissions={overrides}>a</Agent>)
    await runtime.evaluate(<Agent permissions={{ network: false }}>b</Agent>)
    await runtime.evaluate(<Agent permissions={{ filesystem: "read-write", network: false, shell: false }}>c</Agent>)
    await runtime.evaluate(<Agent permissions={{}}>d</Agent>)
    await runtime.evaluate(<Agent permissions={{ network: undefined } as any}>e</Agent>)
    expect(calls.map((c) => c.request.permissions)).toEqual([
      { filesystem: "read-only", network: true, shell: true },
      { filesystem: "read-write", network: false, shell: true },
      { filesystem: "read-write", network: false, shell: false },
      DEFAULTS,
      DEFAULTS,
    ])
    for (const call of calls) expect(Object.isFrozen(call.request.permissions)).toBe(true)
    expect(calls[0].request.permissions).not.toBe(overrides)
    expect(Object.isFrozen(overrides)).toBe(false)
  })

  test("each permission member is read once", async () => {
    const { calls, provider } = recorder()
    let reads = 0
    const permissions = {
      get filesystem() {
        reads++
        return reads === 1 ? "read-only" : "not valid"
      },
    }
    await new AmlRuntime({ agentProvider: provider }).evaluate(<Agent permissions={permissions as any}>x</Agent>)
    expect(reads).toBe(1)
    expect(calls[0].request.permissions.filesystem).toBe("read-only")
  })
})
