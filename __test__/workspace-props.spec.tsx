// <Workspace> placement, props and the acquire request (INVENTORY WS-1): every documented
// message in its documented order, the defaults, and the frozen request shape.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, evaluate, Sandbox, Script, System, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider, DeterministicWorkspaceProvider } from "@aml-jsx/sdk/testing"

import { expectEvaluationError, rejection } from "./support/errors.js"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

function setup() {
  const workspaceProvider = new DeterministicWorkspaceProvider()
  const runtime = new AmlRuntime({
    agentProvider: new DeterministicAgentProvider(),
    sandboxProvider: new DeterministicSandboxProvider(),
    workspaceProvider,
  })
  return { runtime, workspaceProvider }
}

describe("placement", () => {
  test("one Workspace per evaluation, sequential or nested, including nested evaluate()", async () => {
    const { runtime, workspaceProvider } = setup()
    const message = "An AML evaluation may contain at most one <Workspace>"
    await expectEvaluationError(runtime.evaluate([<Workspace>a</Workspace>, <Workspace>b</Workspace>]), message)
    await expectEvaluationError(runtime.evaluate(<Workspace><Workspace>b</Workspace></Workspace>), message)
    async function Nested() {
      return evaluate(<Workspace>inner</Workspace>)
    }
    await expectEvaluationError(runtime.evaluate(<Workspace><Nested /></Workspace>), message)
    // Every acquired lease was released.
    expect(workspaceProvider.releases).toHaveLength(workspaceProvider.acquisitions.length)
  })

  test("a Workspace below an Agent, a scope or a private input is not top-level", async () => {
    const { runtime, workspaceProvider } = setup()
    const message = "<Workspace> must be a top-level resource boundary"
    const trees = [
      <Agent><Workspace>x</Workspace></Agent>,
      <Agent><System><Workspace>x</Workspace></System></Agent>,
      <Sandbox><Workspace>x</Workspace></Sandbox>,
      <Script shell="sh"><Workspace>x</Workspace></Script>,
    ]
    for (const tree of trees) await expectEvaluationError(runtime.evaluate(tree), message)
    function InAgent() {
      return evaluate(<Workspace>x</Workspace>)
    }
    await expectEvaluationError(runtime.evaluate(<Agent><InAgent /></Agent>), message)
    expect(workspaceProvider.acquisitions).toHaveLength(0)
  })

  test("components, Fragments and nested evaluate() at the root are top-level", async () => {
    const { runtime, workspaceProvider } = setup()
    const Wrapper = () => <>{[<Workspace key="w">ok</Workspace>]}</>
    await expect(runtime.evaluate(<Wrapper />)).resolves.toBe("ok")
    async function Root() {
      return `[${await evaluate(<Workspace>nested</Workspace>)}]`
    }
    await expect(runtime.evaluate(<Root />)).resolves.toBe("[nested]")
    expect(workspaceProvider.releases).toHaveLength(2)
  })
})

describe("props", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ id: "" }, "<Workspace> id must be a non-empty normalized string"],
    [{ id: " x" }, "<Workspace> id must be a non-empty normalized string"],
    [{ id: 7 }, "<Workspace> id must be a non-empty normalized string"],
    [{ cwd: "" }, "<Workspace> cwd must be a non-empty string"],
    [{ cwd: "/abs" }, "<Workspace> cwd must be a relative forward-slash path"],
    [{ cwd: "a\\b" }, "<Workspace> cwd must be a relative forward-slash path"],
    [{ cwd: "a/../b" }, "<Workspace> cwd cannot contain parent traversal"],
    [{ load: "yes" }, "<Workspace> load must be a boolean or options object"],
    [{ load: [] }, "<Workspace> load must be a boolean or options object"],
    [{ load: { revision: "" } }, "<Workspace> load revision must be a non-empty normalized string"],
    [{ load: { revision: " r" } }, "<Workspace> load revision must be a non-empty normalized string"],
    [{ load: { include: "a" } }, "<Workspace> load include must be an array"],
    [{ load: { include: ["ok", "!neg"] } }, "<Workspace> load include[1] must be a normalized relative forward-slash glob without negation"],
    [{ load: { exclude: {} } }, "<Workspace> load exclude must be an array"],
    [{ load: { exclude: ["/abs"] } }, "<Workspace> load exclude[0] must be a normalized relative forward-slash glob without negation"],
    [{ lock: "yes" }, "<Workspace> lock must be a boolean"],
    [{ save: 1 }, "<Workspace> save must be a boolean or options object"],
    [{ save: { on: "never" } }, '<Workspace> save on must be "always" or "success"'],
    [{ save: { retention: 0 } }, "<Workspace> save retention must be a positive safe integer"],
    [{ save: { retention: 1.5 } }, "<Workspace> save retention must be a positive safe integer"],
    [{ save: { gitignore: "no" } }, "<Workspace> save gitignore must be a boolean"],
    [{ save: { include: ["a\\b"] } }, "<Workspace> save include[0] must be a normalized relative forward-slash glob without negation"],
    [{ save: { exclude: ["a/../b"] } }, "<Workspace> save exclude[0] must be a normalized relative forward-slash glob without negation"],
    [{ save: { exclude: [" a"] } }, "<Workspace> save exclude[0] must be a normalized relative forward-slash glob without negation"],
    [{ save: { exclude: [3] } }, "<Workspace> save exclude[0] must be a normalized relative forward-slash glob without negation"],
    [{ writeConcurrency: "many" }, '<Workspace> writeConcurrency must be "parallel" or "serial"'],
  ]
  test.each(cases)("%o is rejected with the documented message", async (props, message) => {
    const { runtime, workspaceProvider } = setup()
    await expectEvaluationError(runtime.evaluate(<Workspace {...(props as any)}>x</Workspace>), message)
    expect(workspaceProvider.acquisitions).toHaveLength(0)
  })

  test("errors come in the documented order", async () => {
    const { runtime } = setup()
    const all = { id: "", cwd: "/", load: 1, lock: 1, save: 1, writeConcurrency: 1 }
    const order = [
      "<Workspace> id must be a non-empty normalized string",
      "<Workspace> cwd must be a relative forward-slash path",
      "<Workspace> load must be a boolean or options object",
      "<Workspace> lock must be a boolean",
      "<Workspace> save must be a boolean or options object",
      '<Workspace> writeConcurrency must be "parallel" or "serial"',
    ]
    const props: Record<string, unknown> = { ...all }
    for (const [index, message] of order.entries()) {
      await expectEvaluationError(runtime.evaluate(<Workspace {...(props as any)} />), message)
      delete props[Object.keys(all)[index]]
    }
    // With every prop valid, the missing provider is last.
    await expectEvaluationError(
      new AmlRuntime().evaluate(<Workspace id="x" />),
      "<Workspace> requires a provider or AmlRuntime workspaceProvider",
    )
  })

  test("the provider prop is validated like the runtime option (TypeErrors)", async () => {
    const { runtime } = setup()
    const cases: [unknown, string][] = [
      [null, "Workspace provider must be an object"],
      [{ name: "", acquire() {} }, "Workspace provider name must be a non-empty string"],
      [{ name: " p", acquire() {} }, "Workspace provider name must already be normalized"],
      [{ name: "p" }, "Workspace provider acquire must be a function"],
    ]
    for (const [provider, message] of cases) {
      const error = await rejection(runtime.evaluate(<Workspace provider={provider as any} />))
      expect(error.constructor).toBe(TypeError)
      expect(error.message).toBe(message)
    }
  })
})

describe("the acquire request", () => {
  test("defaults: a random UUID id, current revision, lock, no save; the request is frozen", async () => {
    const { runtime, workspaceProvider } = setup()
    let runId = ""
    runtime.on("start", (event: any) => void (runId = event.runId))
    await runtime.evaluate(<Workspace>x</Workspace>)
    const [request] = workspaceProvider.acquisitions as any[]
    expect(Object.keys(request).sort()).toEqual(["evaluationId", "id", "load", "lock", "save", "signal"])
    expect(request.evaluationId).toBe(runId)
    expect(request.id).toMatch(UUID)
    expect(request.load).toEqual({ exclude: [], revision: "current" })
    expect(request.lock).toBe(true)
    expect(request.save).toBe(false)
    expect(request.signal).toBeInstanceOf(AbortSignal)
    expect(Object.isFrozen(request) && Object.isFrozen(request.load) && Object.isFrozen(request.load.exclude)).toBe(true)
    await runtime.evaluate(<Workspace>x</Workspace>)
    expect((workspaceProvider.acquisitions[1] as any).id).not.toBe(request.id)
  })

  test("authored load, lock and save reach the request", async () => {
    const { runtime, workspaceProvider } = setup()
    await runtime.evaluate(
      <Workspace id="review-42" load={{ revision: "r-1", include: ["src/**"], exclude: ["**/*.tmp"] }} lock={false} save>
        x
      </Workspace>,
    )
    await runtime.evaluate(<Workspace id="review-43" load={false} save={{ on: "always" }} />)
    const [first, second] = workspaceProvider.acquisitions as any[]
    expect(first).toMatchObject({ id: "review-42", lock: false, save: true })
    expect(first.load).toEqual({ exclude: ["**/*.tmp"], include: ["src/**"], revision: "r-1" })
    expect(second).toMatchObject({ id: "review-43", load: false, lock: true, save: true })
  })

  test("a Workspace prop wins over the runtime default", async () => {
    const { runtime, workspaceProvider } = setup()
    const own = new DeterministicWorkspaceProvider({ name: "own" })
    await runtime.evaluate(<Workspace provider={own}>x</Workspace>)
    expect(own.acquisitions).toHaveLength(1)
    expect(workspaceProvider.acquisitions).toHaveLength(0)
  })
})

