// <Agent> inside <Sandbox> (INVENTORY AG-1, AG-4, SB-3): the Sandbox handshake and its place
// among the completion-time checks, read-only permission narrowing, context.sandbox,
// `<Agent cwd>`, supportsSandboxRuntime, and cancellation of a sandboxed Agent.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Sandbox, evaluate, supportsSandboxRuntime } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"
import { expectEvaluationError, rejection } from "./support/errors.js"

function runtimeWith(agentProvider: any, options: Record<string, unknown> = {}) {
  const sandbox = new DeterministicSandboxProvider({ name: "box" })
  return { runtime: new AmlRuntime({ agentProvider, sandboxProvider: sandbox, ...options }), sandbox }
}

describe("the Sandbox handshake", () => {
  test("supportsSandbox must return exactly true", async () => {
    for (const answer of [false, "true", 1, undefined, Promise.resolve(true)]) {
      const agent = new DeterministicAgentProvider({ name: "a", supportsSandbox: () => answer as any })
      const { runtime, sandbox } = runtimeWith({ name: "a", run: agent.run.bind(agent), supportsSandbox: () => answer })
      await expectEvaluationError(
        runtime.evaluate(
          <Sandbox>
            <Agent>x</Agent>
          </Sandbox>,
        ),
        'Agent provider "a" cannot run inside Sandbox provider "box"',
      )
      expect(sandbox.releases).toEqual(["box-1"])
    }
  })

  test("a provider without supportsSandbox cannot run inside a Sandbox", async () => {
    const { runtime } = runtimeWith({ name: "plain", run: async () => ({ text: "t" }) })
    expect(await runtime.evaluate(<Agent>outside</Agent>)).toBe("t")
    await expectEvaluationError(
      runtime.evaluate(
        <Sandbox>
          <Agent>x</Agent>
        </Sandbox>,
      ),
      'Agent provider "plain" cannot run inside Sandbox provider "box"',
    )
  })

  test("a throwing check is wrapped with its cause; it runs masked with this = provider", async () => {
    const cause = new Error("probe failed")
    const seen: any[] = []
    const provider = {
      name: "t",
      run: async () => ({ text: "" }),
      supportsSandbox(this: unknown, session: unknown) {
        seen.push(this, session)
        expect(() => evaluate("x")).toThrow("evaluate() is only available while an AML component is active")
        throw cause
      },
    }
    const { runtime } = runtimeWith(provider)
    const error = await expectEvaluationError(
      runtime.evaluate(
        <Sandbox root="r">
          <Agent cwd="src">x</Agent>
        </Sandbox>,
      ),
      'Agent provider "t" failed its Sandbox compatibility check',
    )
    expect(error.cause).toBe(cause)
    expect(seen[0]).toBe(provider)
    expect(seen[1]).toMatchObject({ cwd: "r/src", root: "r", nested: false })
  })

  test("order: children, then the provider check, then the handshake, then the budgets", async () => {
    const log: string[] = []
    const Child = () => (log.push("child"), "c")
    const refuse = { name: "r", run: async () => ({ text: "" }), supportsSandbox: () => (log.push("check"), false) }
    const tree = (
      <Sandbox>
        <Agent>
          <Child />
          <FollowUp>one more turn</FollowUp>
        </Agent>
      </Sandbox>
    )
    const { runtime } = runtimeWith(refuse, { maxTurnsPerAgent: 1, maxAgentCalls: 1 })
    await expectEvaluationError(runtime.evaluate(tree), 'Agent provider "r" cannot run inside Sandbox provider "box"')
    expect(log).toEqual(["child", "check"])
    log.length = 0
    const accept = { ...refuse, supportsSandbox: () => (log.push("check"), true) }
    await expectEvaluationError(runtimeWith(accept, { maxTurnsPerAgent: 1 }).runtime.evaluate(tree), "Agent span-2 exceeded maxTurnsPerAgent 1")
    expect(log).toEqual(["child", "check"])
    log.length = 0
    const sandbox = new DeterministicSandboxProvider()
    await expectEvaluationError(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(tree), "Agent span-2 has no provider")
    expect(log).toEqual(["child"])
  })
})

describe("the session an Agent sees", () => {
  test("context.sandbox is the effective session; absent outside a Sandbox", async () => {
    const agent = new DeterministicAgentProvider({ supportsSandbox: () => true })
    const { runtime } = runtimeWith(agent)
    await runtime.evaluate([
      <Agent>out</Agent>,
      <Sandbox access="read-write" root="repo">
        <Agent>in</Agent>
        <Sandbox cwd="docs">
          <Agent>nested</Agent>
        </Sandbox>
      </Sandbox>,
    ])
    const [outside, inside, nested] = agent.calls.map((call) => call.context)
    expect("sandbox" in outside!).toBe(false)
    expect(inside!.sandbox).toMatchObject({ access: "read-write", cwd: "repo", nested: false, root: "repo" })
    expect(nested!.sandbox).toMatchObject({ cwd: "repo/docs", nested: true, root: "repo" })
    expect(nested!.sandbox!.lease).toBe(inside!.sandbox!.lease)
    expect(Object.isFrozen(inside)).toBe(true)
  })

  test("<Agent cwd> resolves from the Sandbox root, not its cwd, and replaces only cwd", async () => {
    const agent = new DeterministicAgentProvider({ supportsSandbox: () => true })
    const { runtime } = runtimeWith(agent)
    await runtime.evaluate(
      <Sandbox root="repo" cwd="docs">
        <Agent cwd="src/lib">x</Agent>
      </Sandbox>,
    )
    const session = agent.calls[0]!.context.sandbox!
    expect(session).toMatchObject({ access: "read-only", cwd: "repo/src/lib", nested: false, root: "repo" })
    expect(Object.isFrozen(session)).toBe(true)
    expect(supportsSandboxRuntime(session)).toBe(true)
  })

  test.each([
    ["", "<Agent> cwd must be a non-empty string"],
    [1, "<Agent> cwd must be a non-empty string"],
    ["/src", "<Agent> cwd must be a relative forward-slash path"],
    ["src\\lib", "<Agent> cwd must be a relative forward-slash path"],
    ["../src", "<Agent> cwd cannot contain parent traversal"],
  ])("<Agent cwd=%j> is rejected when entered", async (cwd, message) => {
    const agent = new DeterministicAgentProvider({ supportsSandbox: () => true })
    const { runtime } = runtimeWith(agent)
    let ran = false
    const Child = () => ((ran = true), "c")
    await expectEvaluationError(
      runtime.evaluate(
        <Sandbox>
          <Agent cwd={cwd as any}>
            <Child />
          </Agent>
        </Sandbox>,
      ),
      message,
    )
    expect(ran).toBe(false)
    await expectEvaluationError(runtime.evaluate(<Agent cwd="src">x</Agent>), "<Agent> cwd requires an enclosing <Sandbox>")
  })

  test("a read-only Sandbox forces filesystem read-only; read-write keeps the overrides", async () => {
    const agent = new DeterministicAgentProvider({ supportsSandbox: () => true })
    const { runtime } = runtimeWith(agent)
    await runtime.evaluate([
      <Sandbox>
        <Agent permissions={{ filesystem: "read-write", network: false }}>a</Agent>
        <Agent>b</Agent>
      </Sandbox>,
      <Sandbox access="read-write">
        <Agent>c</Agent>
        <Agent permissions={{ filesystem: "read-only" }}>d</Agent>
        <Sandbox access="read-only">
          <Agent>e</Agent>
        </Sandbox>
      </Sandbox>,
    ])
    const permissions = agent.calls.map((call) => call.request.permissions)
    expect(permissions).toEqual([
      { filesystem: "read-only", network: false, shell: true },
      { filesystem: "read-only", network: true, shell: true },
      { filesystem: "read-write", network: true, shell: true },
      { filesystem: "read-only", network: true, shell: true },
      { filesystem: "read-only", network: true, shell: true },
    ])
    expect(permissions.every((p) => Object.isFrozen(p))).toBe(true)
  })

  test("cancelling a sandboxed Agent releases the lease before its wrapped reason surfaces", async () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    const agent = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      respond: (_request, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason))
          controller.abort(reason)
        }),
    })
    const { runtime, sandbox } = runtimeWith(agent)
    const tree = (
      <Sandbox>
        <Agent>x</Agent>
      </Sandbox>
    )
    expect((await rejection(runtime.evaluate(tree, { signal: controller.signal }))).cause).toBe(reason)
    expect(sandbox.releases).toEqual(["box-1"])
  })
})

describe("supportsSandboxRuntime (SB-3)", () => {
  test("matches root and access; narrowing only cwd keeps the match", async () => {
    const agent = new DeterministicAgentProvider({ supportsSandbox: supportsSandboxRuntime })
    const { runtime } = runtimeWith(agent)
    expect(
      await runtime.evaluate(
        <Sandbox access="read-write" root="r">
          <Agent>outer</Agent>
          <Sandbox cwd="c">
            <Agent>cwd only</Agent>
          </Sandbox>
        </Sandbox>,
      ),
    ).toBe("outercwd only")
    for (const narrowing of [{ root: "sub" }, { access: "read-only" as const }]) {
      await expectEvaluationError(
        runtime.evaluate(
          <Sandbox access="read-write">
            <Sandbox {...narrowing}>
              <Agent>x</Agent>
            </Sandbox>
          </Sandbox>,
        ),
        'Agent provider "deterministic" cannot run inside Sandbox provider "box"',
      )
    }
  })

  test("never throws", () => {
    const runtime = { access: "read-only", root: ".", exec() {}, spawn() {} }
    const session = (overrides = {}) => ({ access: "read-only", root: ".", lease: { runtime: { ...runtime, ...overrides } } })
    expect(supportsSandboxRuntime(session() as any)).toBe(true)
    expect(supportsSandboxRuntime(session({ exec: 1 }) as any)).toBe(false)
    expect(supportsSandboxRuntime(session({ spawn: undefined }) as any)).toBe(false)
    expect(supportsSandboxRuntime(null as any)).toBe(false)
    expect(supportsSandboxRuntime({ lease: { get runtime() { throw new Error("x") } } } as any)).toBe(false)
    expect(supportsSandboxRuntime(new Proxy({}, { get() { throw new Error("x") } }) as any)).toBe(false)
  })
})
