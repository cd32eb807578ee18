// <Sandbox> scope rules (INVENTORY SB-1, §2.3): outer acquisition requests, root/cwd/access
// resolution, the portable path rules, nested views, the descendant-visible session, the
// `sandbox` span and the FollowUp placement rule through a Sandbox.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, FollowUp, Sandbox, evaluate } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { traceRecorder } from "./support/async.js"
import { expectEvaluationError, rejection } from "./support/errors.js"

/** A runtime with deterministic providers; the Agent accepts every Sandbox. */
function setup() {
  const agent = new DeterministicAgentProvider({ supportsSandbox: () => true })
  const sandbox = new DeterministicSandboxProvider()
  const runtime = new AmlRuntime({ agentProvider: agent, sandboxProvider: sandbox })
  const session = (index = 0) => agent.calls[index]!.context.sandbox
  return { agent, runtime, sandbox, session }
}

describe("outer <Sandbox> acquisition request", () => {
  test("defaults: read-only, root and cwd '.', the runId, the evaluation signal; frozen", async () => {
    const { runtime, sandbox } = setup()
    const runIds: string[] = []
    runtime.on("start", (event) => void runIds.push(event.runId))
    const controller = new AbortController()
    expect(await runtime.evaluate(<Sandbox>inside</Sandbox>, { signal: controller.signal })).toBe("inside")
    const [request] = sandbox.acquisitions as any[]
    expect(Object.keys(request)).toEqual(["access", "cwd", "evaluationId", "root", "signal"])
    expect(request).toMatchObject({ access: "read-only", cwd: ".", evaluationId: runIds[0], root: "." })
    expect(request.signal).toBeInstanceOf(AbortSignal)
    expect(Object.isFrozen(request)).toBe(true)
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1"])
  })

  test.each([
    [{ root: "repo" }, { cwd: "repo", root: "repo" }],
    [{ root: "repo", cwd: "src" }, { cwd: "repo/src", root: "repo" }],
    [{ cwd: "src/lib" }, { cwd: "src/lib", root: "." }],
    [{ root: "./a//b", cwd: "./c" }, { cwd: "a/b/c", root: "a/b" }],
    [{ access: "read-write" }, { access: "read-write", cwd: ".", root: "." }],
  ] as const)("props %j give %j", async (props, expected) => {
    const { runtime, sandbox } = setup()
    await runtime.evaluate(<Sandbox {...(props as any)} />)
    expect(sandbox.acquisitions[0]).toMatchObject(expected)
  })

  test("each outer Sandbox acquires exactly once; nested views acquire nothing", async () => {
    const { runtime, sandbox } = setup()
    await runtime.evaluate([
      <Sandbox access="read-write">
        <Sandbox root="a">
          <Sandbox access="read-only" />
        </Sandbox>
      </Sandbox>,
      <Sandbox />,
    ])
    expect(sandbox.acquisitions).toHaveLength(2)
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1", "deterministic-sandbox-2"])
  })

  test("the provider prop wins over the runtime default and is validated with TypeErrors", async () => {
    const { runtime, sandbox } = setup()
    const own = new DeterministicSandboxProvider({ name: "own" })
    await runtime.evaluate(<Sandbox provider={own} />)
    expect(own.acquisitions).toHaveLength(1)
    expect(sandbox.acquisitions).toHaveLength(0)
    const cases: [unknown, string][] = [
      [null, "Sandbox provider must be an object"],
      ["local", "Sandbox provider must be an object"],
      [{ name: "", acquire() {} }, "Sandbox provider name must be a non-empty string"],
      [{ name: " x", acquire() {} }, "Sandbox provider name must already be normalized"],
      [{ name: "x" }, "Sandbox provider acquire must be a function"],
    ]
    for (const [provider, message] of cases) {
      const error = await rejection(runtime.evaluate(<Sandbox provider={provider as any} />))
      expect(error).toBeInstanceOf(TypeError)
      expect(error.message).toBe(message)
    }
  })

  test("without any provider the Sandbox fails before its children", async () => {
    let ran = false
    const Child = () => {
      ran = true
      return "x"
    }
    const tree = <Sandbox><Child /></Sandbox>
    await expectEvaluationError(new AmlRuntime().evaluate(tree), "<Sandbox> requires a provider or AmlRuntime sandboxProvider")
    expect(ran).toBe(false)
  })

  test.each(["write", "READ-ONLY", true, 1, null])("access %j is rejected (outer and nested)", async (access) => {
    const { runtime, sandbox } = setup()
    const message = '<Sandbox> access must be "read-only" or "read-write"'
    await expectEvaluationError(runtime.evaluate(<Sandbox access={access as any} />), message)
    await expectEvaluationError(runtime.evaluate(<Sandbox><Sandbox access={access as any} /></Sandbox>), message)
    expect(sandbox.acquisitions).toHaveLength(1)
    expect(sandbox.releases).toHaveLength(1)
  })
})

describe("portable path rules (root and cwd, outer and nested)", () => {
  const cases: [unknown, string][] = [
    ["", "must be a non-empty string"],
    ["  \t", "must be a non-empty string"],
    [42, "must be a non-empty string"],
    ["/abs", "must be a relative forward-slash path"],
    ["C:\\repo", "must be a relative forward-slash path"],
    ["C:/repo", "must be a relative forward-slash path"],
    ["a\\b", "must be a relative forward-slash path"],
    ["\\\\server\\share", "must be a relative forward-slash path"],
    ["..", "cannot contain parent traversal"],
    ["../outside", "cannot contain parent traversal"],
    ["a/../b", "cannot contain parent traversal"],
    ["a/..", "cannot contain parent traversal"],
  ]
  test.each(cases)("%j: %s", async (value, problem) => {
    const { runtime, sandbox } = setup()
    for (const prop of ["root", "cwd"]) {
      const props = { [prop]: value } as any
      await expectEvaluationError(runtime.evaluate(<Sandbox {...props} />), `<Sandbox> ${prop} ${problem}`)
      await expectEvaluationError(
        runtime.evaluate(
          <Sandbox root="base">
            <Sandbox {...props} />
          </Sandbox>,
        ),
        `<Sandbox> ${prop} ${problem}`,
      )
    }
    // Outer failures happen before acquisition; nested ones release the outer lease.
    expect(sandbox.acquisitions).toHaveLength(2)
    expect(sandbox.releases).toHaveLength(2)
  })

  test("'..' inside a segment name is an ordinary name", async () => {
    const { runtime, sandbox } = setup()
    await runtime.evaluate(<Sandbox root="a..b" cwd="..c" />)
    expect(sandbox.acquisitions[0]).toMatchObject({ cwd: "a..b/..c", root: "a..b" })
  })
})

describe("nested <Sandbox> views", () => {
  const Probe = () => <Agent>probe</Agent>

  test("root resolves under the parent root, cwd under the new root; access inherits", async () => {
    const { runtime, session } = setup()
    await runtime.evaluate(
      <Sandbox access="read-write" root="repo" cwd="docs">
        <Sandbox>
          <Probe />
        </Sandbox>
        <Sandbox root="packages/api">
          <Probe />
        </Sandbox>
        <Sandbox root="packages" cwd="web/src" access="read-only">
          <Probe />
        </Sandbox>
        <Sandbox cwd="tools">
          <Probe />
        </Sandbox>
      </Sandbox>,
    )
    const views = [0, 1, 2, 3].map((i) => {
      const { access, cwd, nested, root } = session(i)
      return { access, cwd, nested, root }
    })
    expect(views).toEqual([
      { access: "read-write", cwd: "repo/docs", nested: true, root: "repo" },
      { access: "read-write", cwd: "repo/packages/api", nested: true, root: "repo/packages/api" },
      { access: "read-only", cwd: "repo/packages/web/src", nested: true, root: "repo/packages" },
      { access: "read-write", cwd: "repo/tools", nested: true, root: "repo" },
    ])
  })

  test("a nested Sandbox cannot select a provider or widen read-only access", async () => {
    const { runtime, sandbox } = setup()
    await expectEvaluationError(
      runtime.evaluate(
        <Sandbox>
          <Sandbox provider={new DeterministicSandboxProvider()} />
        </Sandbox>,
      ),
      "A nested <Sandbox> cannot select a provider; it inherits the parent lease",
    )
    await expectEvaluationError(
      runtime.evaluate(
        <Sandbox access="read-write">
          <Sandbox access="read-only">
            <Sandbox access="read-write" />
          </Sandbox>
        </Sandbox>,
      ),
      "A nested <Sandbox> cannot widen read-only access to read-write",
    )
    expect(sandbox.releases).toHaveLength(2)
  })

  test("descendants get a frozen session without release or acquire", async () => {
    const { runtime, session } = setup()
    await runtime.evaluate(<Sandbox access="read-write"><Probe /></Sandbox>)
    const view = session()
    expect(Object.keys(view)).toEqual(["access", "cwd", "lease", "nested", "provider", "root"])
    expect(Object.keys(view.lease)).toEqual(["handle", "id", "runtime"])
    expect(view.provider).toEqual({ name: "deterministic-sandbox" })
    expect(view.lease.id).toBe("deterministic-sandbox-1")
    expect(Object.isFrozen(view) && Object.isFrozen(view.lease) && Object.isFrozen(view.provider)).toBe(true)
    expect("release" in view.lease).toBe(false)
    expect(view.lease.runtime).toMatchObject({ access: "read-write", cwd: ".", root: "." })
    expect(Object.isFrozen(view.lease.runtime)).toBe(true)
  })

  test("component-local evaluate() inherits the active session", async () => {
    const { runtime, sandbox, session } = setup()
    const Inner = async () => [await evaluate(<Agent>a</Agent>), await evaluate(<Sandbox cwd="x" />)]
    expect(
      await runtime.evaluate(
        <Sandbox root="r">
          <Inner />
        </Sandbox>,
      ),
    ).toBe("a")
    expect(session()).toMatchObject({ nested: false, root: "r" })
    expect(sandbox.acquisitions).toHaveLength(1)
  })
})

describe("trace and placement", () => {
  test("sandbox spans: span-N, name Sandbox, nested attribute, closed after the release", async () => {
    const log: string[] = []
    const sandbox = new DeterministicSandboxProvider({ release: ({ id }) => void log.push(`release ${id}`) })
    const runtime = new AmlRuntime({ sandboxProvider: sandbox })
    const { events, sink } = traceRecorder()
    runtime.on("trace", (event: any) => {
      sink(event)
      if (event.kind === "sandbox") log.push(`${event.type} ${event.spanId}`)
    })
    await runtime.evaluate(<Sandbox><Sandbox /></Sandbox>)
    const spans = events.filter((event) => event.kind === "sandbox" && event.type === "span.start")
    expect(spans.map((span) => [span.spanId, span.parentSpanId, span.name, span.attributes])).toEqual([
      ["span-1", "trace-0", "Sandbox", { nested: false }],
      ["span-2", "span-1", "Sandbox", { nested: true }],
    ])
    expect(log).toEqual([
      "span.start span-1",
      "span.start span-2",
      "span.end span-2",
      "release deterministic-sandbox-1",
      "span.end span-1",
    ])
  })

  test("<FollowUp> under a Sandbox inside an Agent is not an immediate message descriptor", async () => {
    const { runtime, sandbox } = setup()
    await expectEvaluationError(
      runtime.evaluate(
        <Sandbox>
          <Agent>
            prompt
            <Sandbox>
              <FollowUp>next</FollowUp>
            </Sandbox>
          </Agent>
        </Sandbox>,
      ),
      "<FollowUp> must be an immediate message descriptor of <Agent>",
    )
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1"])
  })
})
