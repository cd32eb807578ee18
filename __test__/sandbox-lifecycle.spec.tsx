// <Sandbox> lease lifecycle (INVENTORY SB-1): acquisition failures, lease and runtime
// validation, release exactly once after the subtree, cleanup error aggregation, and the
// cancellation races around acquisition.
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Sandbox } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { liveDomains } from "../lib/core/native.js"
import { acquireWritePermit } from "../lib/sandbox/write-permit.js"
import { deferred, delay, until } from "./support/async.js"
import { rejection } from "./support/errors.js"

const RUNTIME = Object.freeze({
  access: "read-write",
  cwd: ".",
  root: ".",
  exec: async () => ({ exitCode: 0, stderr: "", stdout: "" }),
  spawn: async () => ({}),
})

/** A provider whose acquire() answers `lease()`; records release calls. */
function leasing(lease: (release: () => Promise<void>) => unknown) {
  const released: string[] = []
  const release = async () => void released.push("released")
  return { provider: { name: "p", acquire: async () => lease(release) }, released }
}

describe("acquisition failures", () => {
  test("a rejecting or throwing acquire() is wrapped with its cause", async () => {
    const cause = new Error("no capacity")
    for (const acquire of [async () => Promise.reject(cause), () => { throw cause }]) {
      const runtime = new AmlRuntime({ sandboxProvider: { name: "p", acquire } as any })
      const error = await rejection(runtime.evaluate(<Sandbox>x</Sandbox>))
      expect(error).toBeInstanceOf(EvaluationError)
      expect(error.message).toBe('Sandbox provider "p" failed to acquire')
      expect(error.cause).toBe(cause)
    }
  })
})

describe("lease validation", () => {
  const thrower = (message: string) => ({ get() { throw new Error(message) } })
  const lease = (overrides: PropertyDescriptorMap, release?: () => Promise<void>) =>
    Object.defineProperties({ handle: {}, id: "lease-1", release, runtime: RUNTIME }, overrides)
  const runtimeWith = (overrides: PropertyDescriptorMap) => Object.defineProperties({ ...RUNTIME }, overrides)
  const cases: [string, (release: () => Promise<void>) => unknown, string, boolean][] = [
    ["null", () => null, "returned an invalid lease", false],
    ["a string", () => "lease", "returned an invalid lease", false],
    ["unreadable release", () => lease({ release: thrower("release") }), "returned a lease with an unreadable release method", false],
    ["no release", () => lease({ release: { value: "no" } }), "returned a lease without release()", false],
    ["unreadable id", (r) => lease({ id: thrower("id") }, r), "returned a lease with unreadable identity data", true],
    ["empty id", (r) => lease({ id: { value: "" } }, r), "returned a lease with an invalid id", true],
    ["numeric id", (r) => lease({ id: { value: 7 } }, r), "returned a lease with an invalid id", true],
    ["no runtime", (r) => lease({ runtime: { value: null } }, r), "returned an invalid runtime", true],
    ["unreadable runtime", (r) => lease({ runtime: { value: runtimeWith({ root: thrower("root") }) } }, r), "returned an unreadable runtime", true],
    ["runtime access", (r) => lease({ runtime: { value: { ...RUNTIME, access: "rw" } } }, r), "returned a runtime with invalid access", true],
    ["runtime cwd", (r) => lease({ runtime: { value: { ...RUNTIME, cwd: 1 } } }, r), "returned a runtime with invalid cwd", true],
    ["runtime root", (r) => lease({ runtime: { value: { ...RUNTIME, root: "" } } }, r), "returned a runtime with invalid root", true],
    ["no exec", (r) => lease({ runtime: { value: { ...RUNTIME, exec: undefined } } }, r), "returned a runtime without exec()", true],
    ["no spawn", (r) => lease({ runtime: { value: { ...RUNTIME, spawn: 1 } } }, r), "returned a runtime without spawn()", true],
  ]
  test.each(cases)("%s: TypeError, the lease is released when release() is readable", async (_, make, problem, releasable) => {
    const { provider, released } = leasing(make)
    const error = await rejection(new AmlRuntime({ sandboxProvider: provider }).evaluate(<Sandbox>x</Sandbox>))
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe(`Sandbox provider "p" ${problem}`)
    expect(released).toEqual(releasable ? ["released"] : [])
  })

  test("a malformed lease whose release also fails gives an AggregateError", async () => {
    const cleanup = new Error("release failed")
    const provider = { name: "p", acquire: async () => ({ handle: 1, id: "", runtime: RUNTIME, release: async () => Promise.reject(cleanup) }) }
    const error = await rejection(new AmlRuntime({ sandboxProvider: provider }).evaluate(<Sandbox />))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe('Sandbox provider "p" returned an invalid lease and cleanup failed')
    expect(error.errors[0]).toBeInstanceOf(TypeError)
    expect(error.errors[0].message).toBe('Sandbox provider "p" returned a lease with an invalid id')
    expect(error.errors[1]).toBe(cleanup)
  })
})

describe("runtime validation wrappers", () => {
  /** Runs an Agent whose provider calls `use(runtime)` and returns what it resolved to. */
  async function withRuntime(options: ConstructorParameters<typeof DeterministicSandboxProvider>[0], use: (runtime: any) => Promise<unknown>) {
    let outcome: any
    const agent = {
      name: "a",
      supportsSandbox: () => true,
      async run(_request: unknown, context: any) {
        outcome = await use(context.sandbox.lease.runtime).then((value) => ({ value }), (error) => ({ error }))
        return { text: "" }
      },
    }
    const runtime = new AmlRuntime({ agentProvider: agent, sandboxProvider: new DeterministicSandboxProvider(options) })
    await runtime.evaluate(
      <Sandbox>
        <Agent />
      </Sandbox>,
    )
    return outcome
  }

  test("exec results and spawned processes are validated and frozen", async () => {
    const ok = await withRuntime({}, (runtime) => runtime.exec("echo", ["a", "b"]))
    expect(ok.value).toEqual({ exitCode: 0, stderr: "", stdout: "echo a b" })
    expect(Object.isFrozen(ok.value)).toBe(true)
    const spawned = await withRuntime({}, async (runtime) => {
      const process = await runtime.spawn("echo", ["hi"])
      const text = await new Response(process.stdout).text()
      return { exit: await process.wait(), again: await process.wait(), id: process.id, frozen: Object.isFrozen(process), text }
    })
    expect(spawned.value).toMatchObject({ exit: { exitCode: 0 }, id: "deterministic-process:echo", frozen: true, text: "echo hi" })
    expect(spawned.value.again).toBe(spawned.value.exit)
  })

  const invalid: [string, ConstructorParameters<typeof DeterministicSandboxProvider>[0], (runtime: any) => Promise<unknown>, string][] = [
    ["exec null", { exec: () => null as any }, (r) => r.exec("x"), "returned an invalid command result"],
    ["exec exitCode", { exec: () => ({ exitCode: "0", stderr: "", stdout: "" }) as any }, (r) => r.exec("x"), "returned an invalid command result"],
    ["exec stdout", { exec: () => ({ exitCode: 0, stderr: "" }) as any }, (r) => r.exec("x"), "returned an invalid command result"],
    ["exec unreadable", { exec: () => ({ get exitCode(): number { throw new Error("x") }, stderr: "", stdout: "" }) }, (r) => r.exec("x"), "returned an unreadable command result"],
    ["spawn null", { spawn: () => null as any }, (r) => r.spawn("x"), "returned an invalid process"],
    ["spawn no streams", { spawn: () => ({ id: "p", kill: async () => {}, wait: async () => ({ exitCode: 0 }) }) as any }, (r) => r.spawn("x"), "returned an invalid process"],
    ["spawn unreadable", { spawn: () => ({ get id(): string { throw new Error("x") } }) as any }, (r) => r.spawn("x"), "returned an unreadable process"],
    ["process exit", { spawn: () => ({ id: "p", stdin: new WritableStream(), stdout: new ReadableStream(), stderr: new ReadableStream(), kill: async () => {}, wait: async () => ({ exitCode: null }) }) as any }, async (r) => (await r.spawn("x")).wait(), "returned an invalid process exit"],
  ]
  test.each(invalid)("%s", async (_, options, use, problem) => {
    const outcome = await withRuntime({ name: "s", ...options }, use)
    expect(outcome.error).toBeInstanceOf(TypeError)
    expect(outcome.error.message).toBe(`Sandbox provider "s" ${problem}`)
  })
})

describe("release", () => {
  test("exactly once, after the subtree settles and before the enclosing spans close", async () => {
    const log: string[] = []
    const sandbox = new DeterministicSandboxProvider({ release: async ({ id }) => void log.push(`release ${id}`) })
    const agent = new DeterministicAgentProvider({ supportsSandbox: () => true, respond: async () => (await delay(5), log.push("agent"), { text: "t" }) })
    const runtime = new AmlRuntime({ agentProvider: agent, sandboxProvider: sandbox })
    runtime.on("trace", (event: any) => void (event.type === "span.end" && log.push(`end ${event.kind}`)))
    runtime.on("finish", () => void log.push("finish"))
    const App = () => (
      <Sandbox>
        <Agent>go</Agent>
      </Sandbox>
    )
    await runtime.evaluate(<App />)
    expect(log).toEqual(["agent", "end agent", "release deterministic-sandbox-1", "end sandbox", "end component", "finish", "end evaluation"])
  })

  test("a release failure is wrapped with the lease id", async () => {
    const cause = new Error("gone")
    const sandbox = new DeterministicSandboxProvider({ release: () => Promise.reject(cause) })
    const error = await rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox>x</Sandbox>))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe('Sandbox provider "deterministic-sandbox" failed to release lease "deterministic-sandbox-1"')
    expect(error.cause).toBe(cause)
    expect(sandbox.releases).toHaveLength(1)
  })

  test("a subtree failure keeps its identity when the release succeeds", async () => {
    const failure = new Error("component failed")
    const Fail = () => {
      throw failure
    }
    const sandbox = new DeterministicSandboxProvider()
    const error = await rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox><Fail /></Sandbox>))
    expect(error).toBe(failure)
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1"])
  })

  test("subtree failure and release failure: AggregateError, both preserved", async () => {
    const failure = new Error("component failed")
    const cause = new Error("release failed")
    const Fail = () => {
      throw failure
    }
    const sandbox = new DeterministicSandboxProvider({ release: () => Promise.reject(cause) })
    const error = await rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox><Fail /></Sandbox>))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML evaluation and resource cleanup both failed")
    expect(error.errors[0]).toBe(failure)
    expect(error.errors[1].message).toBe('Sandbox provider "deterministic-sandbox" failed to release lease "deterministic-sandbox-1"')
    expect(error.errors[1].cause).toBe(cause)
  })

  test("cancellation and release failure: AggregateError with the reason first", async () => {
    const reason = new Error("stop")
    const cause = new Error("release failed")
    const controller = new AbortController()
    const sandbox = new DeterministicSandboxProvider({ release: () => Promise.reject(cause) })
    const Wait = () => new Promise(() => controller.abort(reason))
    const error = await rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox><Wait /></Sandbox>, { signal: controller.signal }))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe("AML evaluation was cancelled and Sandbox cleanup failed")
    expect(error.errors[0]).toBe(reason)
    expect(error.errors[1].cause).toBe(cause)
  })
})

describe("cancellation around acquisition", () => {
  test("an acquire that never settles: the evaluation rejects with the reason, nothing leaks", async () => {
    const baseline = liveDomains()
    const reason = new Error("stop")
    const controller = new AbortController()
    const seen: AbortSignal[] = []
    const provider = { name: "hang", acquire: (request: any) => (seen.push(request.signal), new Promise<never>(() => {})) }
    const pending = new AmlRuntime({ sandboxProvider: provider }).evaluate(<Sandbox>x</Sandbox>, { signal: controller.signal })
    await until(() => seen.length === 1, "acquire")
    controller.abort(reason)
    expect(await rejection(pending)).toBe(reason)
    expect(seen[0]!.aborted).toBe(true)
    expect(liveDomains()).toBe(baseline)
  })

  test("a lease delivered after the abort is released", async () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    const gate = deferred()
    const sandbox = new DeterministicSandboxProvider()
    const provider = { name: "late", acquire: async (request: any) => (await gate.promise, sandbox.acquire({ ...request, signal: new AbortController().signal })) }
    const pending = new AmlRuntime({ sandboxProvider: provider }).evaluate(<Sandbox>x</Sandbox>, { signal: controller.signal })
    await delay(5)
    controller.abort(reason)
    expect(await rejection(pending)).toBe(reason)
    gate.resolve()
    await until(() => sandbox.releases.length === 1, "late release")
  })

  test("a provider that ignored the abort but returned a lease: released, then the reason", async () => {
    const reason = new Error("stop")
    for (const [release, expected] of [
      [undefined, "reason"],
      [() => Promise.reject(new Error("x")), "aggregate"],
    ] as const) {
      const controller = new AbortController()
      const sandbox = new DeterministicSandboxProvider({ release })
      // The abort lands while AML reads the lease, after the acquisition settled.
      const provider = {
        name: "ignores",
        acquire: async (request: any) => {
          const lease = await sandbox.acquire(request)
          return { ...lease, get id() { controller.abort(reason); return lease.id } }
        },
      }
      const error = await rejection(new AmlRuntime({ sandboxProvider: provider }).evaluate(<Sandbox>x</Sandbox>, { signal: controller.signal }))
      if (expected === "reason") expect(error).toBe(reason)
      else {
        expect(error.message).toBe("AML evaluation was cancelled and Sandbox cleanup failed")
        expect(error.errors[0]).toBe(reason)
      }
      expect(sandbox.releases).toHaveLength(1)
    }
  })
})

describe("serial Workspace write permits", () => {
  test("FIFO per materialization; an abandoned waiter hands the permit on", async () => {
    const workspace = {}
    const race = (promise: Promise<void>) => promise
    const first = await acquireWritePermit(workspace, race)
    const order: string[] = []
    const abandon = deferred()
    const second = acquireWritePermit(workspace, (p) => Promise.race([p, abandon.promise.then(() => Promise.reject(new Error("abort")))]))
    const third = acquireWritePermit(workspace, race).then((release) => (order.push("third"), release))
    abandon.resolve()
    await expect(second).rejects.toThrow("abort")
    const other = await acquireWritePermit({}, race)
    other()
    first()
    first()
    ;(await third)()
    expect(order).toEqual(["third"])
    const again = await acquireWritePermit(workspace, race)
    again()
  })
})
