// Sandbox provider contracts of issue 8: the DeterministicSandboxProvider hook signatures
// (§2.10), a release that is pending when the caller aborts (§2.11), and lease id
// normalisation (§2.12).
import { describe, expect, test } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Sandbox, Script } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { deferred } from "./support/async.js"
import { expectExact, rejection } from "./support/errors.js"

describe("DeterministicSandboxProvider hooks (§2.10)", () => {
  test("createHandle(request, acquisition) counts from 0; lease ids from 1", async () => {
    const seen: [unknown, number][] = []
    const sandbox = new DeterministicSandboxProvider({
      createHandle: (request, acquisition) => (seen.push([request, acquisition]), { mine: acquisition }),
    })
    const runtime = new AmlRuntime({ sandboxProvider: sandbox })
    await runtime.evaluate(<><Sandbox>a</Sandbox><Sandbox>b</Sandbox></>)
    expect(seen.map(([, n]) => n)).toEqual([0, 1])
    expect(seen[0]![0]).toBe(sandbox.acquisitions[0])
    expect(seen[1]![0]).toBe(sandbox.acquisitions[1])
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1", "deterministic-sandbox-2"])
  })

  test("the default handle carries the 0-based acquisition and the request", async () => {
    const handles: unknown[] = []
    const agent = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      respond: (_request, context: any) => (handles.push(context.sandbox.lease.handle), { text: "" }),
    })
    const sandbox = new DeterministicSandboxProvider()
    await new AmlRuntime({ agentProvider: agent, sandboxProvider: sandbox }).evaluate(<Sandbox><Agent>go</Agent></Sandbox>)
    expect(handles).toEqual([{ acquisition: 0, kind: "deterministic-sandbox", request: sandbox.acquisitions[0] }])
    expect(Object.isFrozen(handles[0])).toBe(true)
  })

  test("exec(command, args, request, options): the lease's request and the <Script>'s own options", async () => {
    const calls: unknown[][] = []
    const sandbox = new DeterministicSandboxProvider({
      exec: (...parameters) => (calls.push(parameters), { exitCode: 0, stderr: "", stdout: "ran" }),
    })
    const out = await new AmlRuntime({ sandboxProvider: sandbox }).evaluate(
      <Sandbox cwd="sub"><Script command="make" args={["all"]} /></Sandbox>,
    )
    expect(out).toBe("ran")
    expect(calls).toHaveLength(1)
    const [command, args, request, options] = calls[0] as [string, string[], unknown, any]
    expect([command, args]).toEqual(["make", ["all"]])
    expect(request).toBe(sandbox.acquisitions[0])
    expect(Object.keys(options).sort()).toEqual(["cwd", "signal"])
    expect(options.cwd).toBe("sub")
    expect(options.signal).toBeInstanceOf(AbortSignal)
  })

  test("spawn(command, args, request, options) and release(frozen {handle, id}, acquisition)", async () => {
    const spawned: unknown[][] = []
    const released: [any, number][] = []
    const sandbox = new DeterministicSandboxProvider({
      createHandle: () => "H",
      release: (lease, acquisition) => void released.push([lease, acquisition]),
      spawn: (...parameters) => {
        spawned.push(parameters)
        return {
          id: "p",
          kill: async () => {},
          stderr: new ReadableStream(),
          stdin: new WritableStream(),
          stdout: new ReadableStream(),
          wait: async () => ({ exitCode: 0 }),
        }
      },
    })
    const passed = { cwd: "." }
    const agent = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      respond: async (_request, context: any) => {
        await context.sandbox.lease.runtime.spawn("srv", ["--port", "1"], passed)
        await context.sandbox.lease.runtime.spawn("bare")
        return { text: "" }
      },
    })
    await new AmlRuntime({ agentProvider: agent, sandboxProvider: sandbox }).evaluate(<Sandbox><Agent>go</Agent></Sandbox>)
    expect(spawned).toEqual([
      ["srv", ["--port", "1"], sandbox.acquisitions[0], passed],
      ["bare", [], sandbox.acquisitions[0], undefined],
    ])
    expect(spawned[0]![3]).toBe(passed)
    expect(released).toEqual([[{ handle: "H", id: "deterministic-sandbox-1" }, 0]])
    expect(Object.isFrozen(released[0]![0])).toBe(true)
  })
})

describe("an abort while release() is pending (§2.11)", () => {
  function pendingRelease(outcome: "reject" | "resolve") {
    const gate = deferred<void>()
    const started = deferred<void>()
    const cause = new Error("release failed")
    let calls = 0
    const sandbox = new DeterministicSandboxProvider({
      release: async () => {
        calls++
        started.resolve()
        await gate.promise
        if (outcome === "reject") throw cause
      },
    })
    return { calls: () => calls, cause, gate, sandbox, started }
  }

  test("the release then rejects: AggregateError [reason, EvaluationError(cause)], release called once", async () => {
    const { calls, cause, gate, sandbox, started } = pendingRelease("reject")
    const controller = new AbortController()
    const reason = new Error("stop")
    const running = rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox>x</Sandbox>, { signal: controller.signal }))
    await started.promise
    controller.abort(reason)
    gate.resolve()
    const error = await running
    expectExact(error, AggregateError, "AML evaluation was cancelled and Sandbox cleanup failed")
    expect(error.errors).toHaveLength(2)
    expect(error.errors[0]).toBe(reason)
    expectExact(error.errors[1], EvaluationError, 'Sandbox provider "deterministic-sandbox" failed to release lease "deterministic-sandbox-1"')
    expect(error.errors[1].cause).toBe(cause)
    expect(calls()).toBe(1)
  })

  test("the release then succeeds: the evaluation rejects with the reason", async () => {
    const { calls, gate, sandbox, started } = pendingRelease("resolve")
    const controller = new AbortController()
    const reason = new Error("stop")
    const running = rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<>{"a"}<Sandbox>x</Sandbox>{"b"}</>, { signal: controller.signal }))
    await started.promise
    controller.abort(reason)
    gate.resolve()
    expect(await running).toBe(reason)
    expect(calls()).toBe(1)
    expect(sandbox.releases).toEqual(["deterministic-sandbox-1"])
  })

  test("also as the last value of the tree", async () => {
    const { gate, sandbox, started } = pendingRelease("resolve")
    const controller = new AbortController()
    const running = rejection(new AmlRuntime({ sandboxProvider: sandbox }).evaluate(<Sandbox>x</Sandbox>, { signal: controller.signal }))
    await started.promise
    controller.abort("halt")
    gate.resolve()
    expect(await running).toBe("halt")
  })
})

describe("lease ids are normalised (§2.12)", () => {
  const RUNTIME = Object.freeze({
    access: "read-only",
    cwd: ".",
    exec: async () => ({ exitCode: 0, stderr: "", stdout: "" }),
    root: ".",
    spawn: async () => ({}),
  })
  test.each([[""], [" lease"], ["lease "], ["\tlease\n"], [7], [null], [undefined]])("id %j: released once, then TypeError; children never run", async (id) => {
    let releases = 0
    let ran = false
    const provider = {
      acquire: async () => ({ handle: {}, id, release: async () => void releases++, runtime: RUNTIME }),
      name: "odd",
    }
    const Child = () => ((ran = true), "child")
    const error = await rejection(new AmlRuntime({ sandboxProvider: provider as any }).evaluate(<Sandbox><Child /></Sandbox>))
    expectExact(error, TypeError, 'Sandbox provider "odd" returned a lease with an invalid id')
    expect(releases).toBe(1)
    expect(ran).toBe(false)
  })

  test("an inner space is fine", async () => {
    const provider = {
      acquire: async () => ({ handle: {}, id: "lease one", release: async () => {}, runtime: RUNTIME }),
      name: "odd",
    }
    await expect(new AmlRuntime({ sandboxProvider: provider as any }).evaluate(<Sandbox>ok</Sandbox>)).resolves.toBe("ok")
  })
})
