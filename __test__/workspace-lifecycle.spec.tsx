// <Workspace> lease lifecycle (INVENTORY WS-1): acquisition failures, lease validation, the
// cancellation races, exactly-once completion (save policy, release always, aggregation),
// the materialization reference and its inheritance, and the `workspace` span.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, evaluate, EvaluationError, Sandbox, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider, DeterministicSandboxProvider, DeterministicWorkspaceProvider } from "@aml-jsx/sdk/testing"

import { deferred, until } from "./support/async.js"
import { expectExact, rejection } from "./support/errors.js"
import { traced } from "./support/trace.js"

const LEASE = { directory: "/w", handle: { kind: "h" }, id: "lease-1" }

const run = (provider: unknown, tree: any, signal?: AbortSignal) =>
  new AmlRuntime({ workspaceProvider: provider as any }).evaluate(tree, signal ? { signal } : undefined)

/** A provider whose acquire() answers `make(release)`; records what the lease was asked. */
function leasing(make: (release: () => Promise<void>, save: (r: unknown) => Promise<void>) => unknown) {
  const calls: string[] = []
  const release = async () => void calls.push("release")
  const save = async (request: unknown) => void calls.push(`save:${(request as any).outcome}`)
  return { provider: { name: "p", acquire: async () => make(release, save) }, calls }
}

describe("acquisition", () => {
  test("a rejecting or throwing acquire() is wrapped with its cause", async () => {
    const cause = new Error("no capacity")
    for (const acquire of [async () => Promise.reject(cause), () => { throw cause }]) {
      const runtime = new AmlRuntime({ workspaceProvider: { name: "p", acquire } as any })
      const error = await rejection(runtime.evaluate(<Workspace>x</Workspace>))
      expectExact(error, EvaluationError, 'Workspace provider "p" failed to acquire')
      expect(error.cause).toBe(cause)
    }
  })

  test("a WorkspaceConflictError from the provider is the cause of the acquire failure", async () => {
    const provider = new DeterministicWorkspaceProvider()
    const runtime = new AmlRuntime({ workspaceProvider: provider })
    const held = deferred()
    async function Holder() {
      await held.promise
      return "held"
    }
    const first = runtime.evaluate(<Workspace id="one"><Holder /></Workspace>)
    await until(() => provider.acquisitions.length === 1)
    const error = await rejection(runtime.evaluate(<Workspace id="one">x</Workspace>))
    expect(error.message).toBe('Workspace provider "deterministic-workspace" failed to acquire')
    expect(error.cause.code).toBe("AML_WORKSPACE_CONFLICT")
    held.resolve()
    await expect(first).resolves.toBe("held")
  })
})

describe("lease validation", () => {
  const thrower = { get() { throw new Error("boom") } }
  const lease = (overrides: PropertyDescriptorMap, release?: unknown, save: unknown = async () => {}) =>
    Object.defineProperties({ ...LEASE, release, save }, overrides)
  const cases: [string, (release: any, save: any) => unknown, string, boolean][] = [
    ["null", () => null, "returned an invalid lease", false],
    ["a number", () => 3, "returned an invalid lease", false],
    ["unreadable release", () => lease({ release: thrower }), "returned a lease with an unreadable release method", false],
    ["no release", () => lease({}), "returned a lease without release()", false],
    ["unreadable save", (r) => lease({ save: thrower }, r), "returned a lease with an unreadable save method", true],
    ["no save", (r) => lease({}, r, "save"), "returned a lease without save()", true],
    ["unreadable directory", (r, s) => lease({ directory: thrower }, r, s), "returned a lease with unreadable materialization data", true],
    ["unreadable handle", (r, s) => lease({ handle: thrower }, r, s), "returned a lease with unreadable materialization data", true],
    ["empty directory", (r, s) => lease({ directory: { value: "" } }, r, s), "returned a lease with an invalid directory", true],
    ["numeric directory", (r, s) => lease({ directory: { value: 1 } }, r, s), "returned a lease with an invalid directory", true],
    ["empty id", (r, s) => lease({ id: { value: "" } }, r, s), "returned a lease with an invalid id", true],
  ]
  test.each(cases)("%s: TypeError, and a readable release() is called", async (_name, make, message, releases) => {
    const { provider, calls } = leasing(make)
    const error = await rejection(new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>))
    expectExact(error, TypeError, `Workspace provider "p" ${message}`)
    expect(calls).toEqual(releases ? ["release"] : [])
  })

  test("ids and directories must equal their trim", async () => {
    for (const [key, value, message] of [
      ["id", " lease-1", "returned a lease with an invalid id"],
      ["id", "lease-1\n", "returned a lease with an invalid id"],
      ["directory", "/w ", "returned a lease with an invalid directory"],
    ]) {
      const { provider, calls } = leasing((release, save) => ({ ...LEASE, [key]: value, release, save }))
      const error = await rejection(new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>))
      expectExact(error, TypeError, `Workspace provider "p" ${message}`)
      expect(calls).toEqual(["release"])
    }
  })

  test("the lease is read once, release first, then save, directory, handle and id", async () => {
    const reads: string[] = []
    const target = { ...LEASE, release: async () => {}, save: async () => {} }
    const lease = new Proxy(target, {
      get(object, key, receiver) {
        if (typeof key === "string") reads.push(key)
        return Reflect.get(object, key, receiver)
      },
    })
    const provider = { name: "p", acquire: async () => lease }
    await expect(new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>)).resolves.toBe("x")
    // `then` is how the awaited acquisition checks for a thenable; every lease field once.
    expect(reads.filter((key) => key !== "then")).toEqual(["release", "save", "directory", "handle", "id"])
  })

  test("an abort raised by a later accessor comes first; the lease is released once", async () => {
    for (const key of ["save", "directory", "id"]) {
      const controller = new AbortController()
      const reason = new Error(`stop in ${key}`)
      const failure = new Error(`${key} unreadable`)
      const release = vi.fn(async () => {})
      const lease = Object.defineProperty({ ...LEASE, release, save: async () => {} }, key, {
        get() {
          controller.abort(reason)
          throw failure
        },
      })
      const provider = { name: "p", acquire: async () => lease }
      const error = await rejection(
        new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>, { signal: controller.signal }),
      )
      expectExact(error, AggregateError, 'Workspace provider "p" returned an invalid lease and cleanup failed or raced cancellation')
      expect(error.errors[0]).toBe(reason)
      expect(error.errors[1]).toBeInstanceOf(TypeError)
      expect(error.errors[1].cause).toBe(failure)
      expect(error.errors).toHaveLength(2)
      expect(release).toHaveBeenCalledOnce()
    }
  })

  test("an abort during the invalid lease's release, which then fails: reason, TypeError, release failure", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    const cleanup = new Error("cleanup")
    const provider = {
      name: "p",
      acquire: async () => ({
        ...LEASE,
        directory: "",
        save: async () => {},
        release: async () => {
          controller.abort(reason)
          throw cleanup
        },
      }),
    }
    const error = await rejection(
      new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>, { signal: controller.signal }),
    )
    expectExact(error, AggregateError, 'Workspace provider "p" returned an invalid lease and cleanup failed or raced cancellation')
    expect(error.errors[0]).toBe(reason)
    expectExact(error.errors[1], TypeError, 'Workspace provider "p" returned a lease with an invalid directory')
    expect(error.errors[2]).toBe(cleanup)
  })

  test("an invalid lease whose release fails is an AggregateError", async () => {
    const cleanup = new Error("cleanup")
    const provider = { name: "p", acquire: async () => ({ ...LEASE, id: "", release: async () => Promise.reject(cleanup), save: async () => {} }) }
    const error = await rejection(new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>))
    expectExact(error, AggregateError, 'Workspace provider "p" returned an invalid lease and cleanup failed or raced cancellation')
    expect(error.errors[0].message).toBe('Workspace provider "p" returned a lease with an invalid id')
    expect(error.errors[1]).toBe(cleanup)
  })
})

describe("cancellation races", () => {
  /** A provider that waits for the abort, then answers `make()`. */
  function lateLease(make: () => unknown) {
    const started = deferred()
    const provider = {
      name: "p",
      acquire: (request: any) =>
        new Promise((resolve) => {
          started.resolve()
          request.signal.addEventListener("abort", () => resolve(make()))
        }),
    }
    return { provider, started }
  }

  async function cancelled(provider: unknown, started: { promise: Promise<void> }) {
    const controller = new AbortController()
    const reason = new Error("stop")
    const pending = new AmlRuntime({ workspaceProvider: provider as any }).evaluate(<Workspace>x</Workspace>, {
      signal: controller.signal,
    })
    await started.promise
    controller.abort(reason)
    return { error: await rejection(pending), reason }
  }

  test("a valid lease delivered after the abort is released, then the reason is thrown", async () => {
    const calls: string[] = []
    const { provider, started } = lateLease(() => ({ ...LEASE, release: async () => void calls.push("release"), save: async () => calls.push("save") }))
    const { error, reason } = await cancelled(provider, started)
    expect(error).toBe(reason)
    expect(calls).toEqual(["release"])
  })

  test("…whose release fails: Workspace acquisition was cancelled and cleanup failed", async () => {
    const cleanup = new Error("cleanup")
    const { provider, started } = lateLease(() => ({ ...LEASE, release: async () => Promise.reject(cleanup), save: async () => {} }))
    const { error, reason } = await cancelled(provider, started)
    expectExact(error, AggregateError, "Workspace acquisition was cancelled and cleanup failed")
    expect(error.errors).toEqual([reason, cleanup])
  })

  test("an invalid lease delivered after the abort is given back if it can be: the reason alone", async () => {
    const calls: string[] = []
    const { provider, started } = lateLease(() => ({ ...LEASE, directory: "", release: async () => void calls.push("release"), save: async () => {} }))
    const { error, reason } = await cancelled(provider, started)
    // With the cleanup authority read, nothing else of a cancelled lease is looked at.
    expect(error).toBe(reason)
    expect(calls).toEqual(["release"])
  })

  test("an invalid lease whose cleanup races the abort", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    const provider = {
      name: "p",
      acquire: async () => ({
        ...LEASE,
        id: "",
        save: async () => {},
        release: async () => controller.abort(reason),
      }),
    }
    const error = await rejection(
      new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>, { signal: controller.signal }),
    )
    expectExact(error, AggregateError, 'Workspace provider "p" returned an invalid lease and cleanup failed or raced cancellation')
    // The cancellation comes first, then the validation error.
    expect(error.errors[0]).toBe(reason)
    expectExact(error.errors[1], TypeError, 'Workspace provider "p" returned a lease with an invalid id')
  })

  test("a provider that ignores the abort is abandoned after the grace; its late lease is released", async () => {
    vi.useFakeTimers()
    try {
      const started = deferred()
      const late = deferred<unknown>()
      const calls: string[] = []
      const provider = {
        name: "p",
        acquire: () => {
          started.resolve()
          return late.promise
        },
      }
      const controller = new AbortController()
      const reason = new Error("stop")
      const pending = new AmlRuntime({ workspaceProvider: provider }).evaluate(<Workspace>x</Workspace>, {
        signal: controller.signal,
      })
      const settled = pending.then(
        () => "resolved",
        (error) => error,
      )
      await started.promise
      controller.abort(reason)
      await vi.advanceTimersByTimeAsync(10_000)
      expect(await settled).toBe(reason)
      late.resolve({ ...LEASE, save: async () => {}, release: async () => void calls.push("release") })
      await vi.advanceTimersByTimeAsync(0)
      for (let i = 0; i < 10 && calls.length === 0; i++) await Promise.resolve()
      expect(calls).toEqual(["release"])
    } finally {
      vi.useRealTimers()
    }
  })

  test("a provider that rejects with the reason: the reason, unwrapped", async () => {
    const started = deferred()
    const provider = {
      name: "p",
      acquire: (request: any) =>
        new Promise((_, reject) => {
          started.resolve()
          request.signal.addEventListener("abort", () => reject(request.signal.reason))
        }),
    }
    const { error, reason } = await cancelled(provider, started)
    expect(error).toBe(reason)
  })
})

describe("completion", () => {
  test("save runs per policy and outcome, release always, each exactly once", async () => {
    const cases: [unknown, boolean, string[]][] = [
      [undefined, true, ["release"]],
      [false, true, ["release"]],
      [true, true, ["save:success", "release"]],
      [true, false, ["release"]],
      [{ on: "always" }, false, ["save:failure", "release"]],
      [{ on: "always" }, true, ["save:success", "release"]],
      [{ on: "success" }, false, ["release"]],
    ]
    for (const [save, succeeds, expected] of cases) {
      const { provider, calls } = leasing((release, saveFn) => ({ ...LEASE, release, save: saveFn }))
      const Fail = () => {
        throw new Error("subtree")
      }
      const tree = <Workspace save={save as any}>{succeeds ? "ok" : <Fail />}</Workspace>
      if (succeeds) await expect(run(provider, tree)).resolves.toBe("ok")
      else await expect(run(provider, tree)).rejects.toThrow("subtree")
      expect(calls, JSON.stringify(save)).toEqual(expected)
    }
  })

  test("the save request is frozen and carries the policy", async () => {
    const requests: any[] = []
    const provider = { name: "p", acquire: async () => ({ ...LEASE, release: async () => {}, save: async (r: any) => void requests.push(r) }) }
    await run(provider, <Workspace save={{ retention: 3, gitignore: false, include: ["src/**"], exclude: ["*.log"] }}>x</Workspace>)
    await run(provider, <Workspace save>x</Workspace>)
    expect(Object.keys(requests[0]).sort()).toEqual(["exclude", "gitignore", "include", "outcome", "retention", "signal"])
    expect(requests[0]).toMatchObject({ exclude: ["*.log"], gitignore: false, include: ["src/**"], outcome: "success", retention: 3 })
    expect(requests[1]).toMatchObject({ exclude: [], gitignore: true, outcome: "success", retention: 1 })
    expect("include" in requests[1]).toBe(false)
    expect(requests.every((r) => Object.isFrozen(r) && r.signal instanceof AbortSignal)).toBe(true)
  })

  test("save and release errors propagate unwrapped; both failing is an AggregateError", async () => {
    const saveError = new Error("save")
    const releaseError = new Error("release")
    const make = (saveFails: boolean, releaseFails: boolean) => ({
      name: "p",
      acquire: async () => ({
        ...LEASE,
        save: async () => { if (saveFails) throw saveError },
        release: async () => { if (releaseFails) throw releaseError },
      }),
    })
    expect(await rejection(run(make(true, false), <Workspace save>x</Workspace>))).toBe(saveError)
    expect(await rejection(run(make(false, true), <Workspace save>x</Workspace>))).toBe(releaseError)
    const both = await rejection(run(make(true, true), <Workspace save>x</Workspace>))
    expectExact(both, AggregateError, "Workspace save and release both failed")
    expect(both.errors).toEqual([saveError, releaseError])
    // Subtree failure plus completion failure.
    const Fail = () => {
      throw new Error("subtree")
    }
    const failed = await rejection(run(make(false, true), <Workspace><Fail /></Workspace>))
    expectExact(failed, AggregateError, "AML evaluation and resource cleanup both failed")
    expect(failed.errors[0].message).toBe("subtree")
    expect(failed.errors[1]).toBe(releaseError)
  })

  test("cancellation skips save, still releases, and aggregates a completion failure", async () => {
    for (const releaseFails of [false, true]) {
      const calls: string[] = []
      const releaseError = new Error("release")
      const provider = {
        name: "p",
        acquire: async () => ({
          ...LEASE,
          save: async () => void calls.push("save"),
          release: async () => {
            calls.push("release")
            if (releaseFails) throw releaseError
          },
        }),
      }
      const controller = new AbortController()
      const reason = new Error("stop")
      const Stop = async () => {
        controller.abort(reason)
        return "never"
      }
      const error = await rejection(run(provider, <Workspace save={{ on: "always" }}><Stop /></Workspace>, controller.signal))
      if (releaseFails) {
        expectExact(error, AggregateError, "AML evaluation was cancelled and Workspace completion failed")
        expect(error.errors).toEqual([reason, releaseError])
      } else {
        expect(error).toBe(reason)
      }
      expect(calls).toEqual(["release"])
    }
  })
})

describe("cancellation during completion", () => {
  /** A provider whose save waits until the test lets it go; the abort lands meanwhile. */
  function slowSave(releaseError?: Error) {
    const saveStarted = deferred()
    const finishSave = deferred()
    const calls: string[] = []
    const provider = {
      name: "p",
      acquire: async () => ({
        ...LEASE,
        save: async () => {
          calls.push("save")
          saveStarted.resolve()
          await finishSave.promise
        },
        release: async () => {
          calls.push("release")
          if (releaseError !== undefined) throw releaseError
        },
      }),
    }
    return { provider, calls, saveStarted, finishSave }
  }

  test("an abort while the final save is pending rejects with the reason; save and release still ran", async () => {
    const { provider, calls, saveStarted, finishSave } = slowSave()
    const controller = new AbortController()
    const reason = new Error("stop during save")
    const pending = run(provider, <Workspace save>done</Workspace>, controller.signal)
    await saveStarted.promise
    controller.abort(reason)
    finishSave.resolve()
    expect(await rejection(pending)).toBe(reason)
    expect(calls).toEqual(["save", "release"])
  })

  test("…and when completion fails too: the reason first, then the completion failure", async () => {
    const releaseError = new Error("release failed")
    const { provider, saveStarted, finishSave } = slowSave(releaseError)
    const controller = new AbortController()
    const reason = new Error("stop during save")
    const pending = run(provider, <Workspace save>done</Workspace>, controller.signal)
    await saveStarted.promise
    controller.abort(reason)
    finishSave.resolve()
    const error = await rejection(pending)
    expectExact(error, AggregateError, "AML evaluation was cancelled and Workspace completion failed")
    expect(error.errors).toEqual([reason, releaseError])
  })
})

describe("cleanup failures are aggregated flat", () => {
  test("[subtree failure, Sandbox release failure, Workspace completion failure]", async () => {
    const subtree = new Error("subtree")
    const saveError = new Error("save")
    const releaseError = new Error("release")
    const sandboxError = new Error("sandbox release")
    const workspace = new DeterministicWorkspaceProvider({
      save: () => Promise.reject(saveError),
      release: () => Promise.reject(releaseError),
    })
    const sandbox = new DeterministicSandboxProvider({ release: () => Promise.reject(sandboxError) })
    const Fail = () => {
      throw subtree
    }
    const error = await rejection(
      new AmlRuntime().evaluate(
        <Workspace id="flat" provider={workspace} save={{ on: "always" }}>
          <Sandbox provider={sandbox}>
            <Sandbox>
              <Fail />
            </Sandbox>
          </Sandbox>
        </Workspace>,
      ),
    )
    expectExact(error, AggregateError, "AML evaluation and resource cleanup both failed")
    expect(error.errors).toHaveLength(3)
    expect(error.errors[0]).toBe(subtree)
    expect(error.errors[1].cause).toBe(sandboxError)
    expectExact(error.errors[2], AggregateError, "Workspace save and release both failed")
    expect(error.errors[2].errors).toEqual([saveError, releaseError])
  })

  test("a user's own AggregateError stays one member", async () => {
    const own = new AggregateError([new Error("a"), new Error("b")], "mine")
    const releaseError = new Error("release")
    const Fail = () => {
      throw own
    }
    const error = await rejection(
      new AmlRuntime().evaluate(
        <Workspace id="own" provider={new DeterministicWorkspaceProvider({ release: () => Promise.reject(releaseError) })}>
          <Fail />
        </Workspace>,
      ),
    )
    expectExact(error, AggregateError, "AML evaluation and resource cleanup both failed")
    expect(error.errors).toEqual([own, releaseError])
  })
})

describe("the materialization reference", () => {
  test("descendant Sandboxes get it as request.workspace; nested evaluate() inherits it", async () => {
    const workspaceProvider = new DeterministicWorkspaceProvider({ directory: "/workspace/review-42" })
    const sandboxProvider = new DeterministicSandboxProvider()
    const runtime = new AmlRuntime({ sandboxProvider, workspaceProvider })
    async function Nested() {
      return evaluate(<Sandbox>inner</Sandbox>)
    }
    await runtime.evaluate(
      <Workspace id="review-42" cwd="repo" writeConcurrency="parallel">
        <Sandbox>outer</Sandbox>
        <Nested />
      </Workspace>,
    )
    const [outer, nested] = sandboxProvider.acquisitions as any[]
    const reference = outer.workspace
    expect(reference).toEqual({
      cwd: "repo",
      directory: "/workspace/review-42",
      handle: (workspaceProvider.acquisitions[0] && { acquisition: 0, kind: "deterministic-workspace", request: workspaceProvider.acquisitions[0] }),
      leaseId: "deterministic-workspace-1",
      provider: { name: "deterministic-workspace" },
      workspaceId: "review-42",
      writeConcurrency: "parallel",
    })
    expect(Object.isFrozen(reference) && Object.isFrozen(reference.provider)).toBe(true)
    expect("save" in reference || "release" in reference).toBe(false)
    // The Sandbox cwd defaults to the Workspace cwd.
    expect(outer.cwd).toBe("repo")
    expect(nested.workspace).toBe(reference)
  })

  test("the Workspace is released after its Sandboxes and Agents", async () => {
    const order: string[] = []
    const workspaceProvider = new DeterministicWorkspaceProvider({ release: async () => void order.push("workspace") })
    const sandboxProvider = new DeterministicSandboxProvider({ release: async () => void order.push("sandbox") })
    const agentProvider = new DeterministicAgentProvider({
      supportsSandbox: () => true,
      respond: (request) => {
        order.push("agent")
        return { text: request.prompt }
      },
    })
    const runtime = new AmlRuntime({ agentProvider, sandboxProvider, workspaceProvider })
    await expect(
      runtime.evaluate(<Workspace save><Sandbox><Agent>Review.</Agent></Sandbox></Workspace>),
    ).resolves.toBe("Review.")
    expect(order).toEqual(["agent", "sandbox", "workspace"])
    expect(workspaceProvider.saves).toEqual(["deterministic-workspace-1"])
  })
})

test("span: kind workspace, name Workspace, a resource span around its subtree", async () => {
  const runtime = new AmlRuntime({ workspaceProvider: new DeterministicWorkspaceProvider() })
  const events = traced(runtime, false)
  await runtime.evaluate(<Workspace><Sandbox provider={new DeterministicSandboxProvider()}>x</Sandbox></Workspace>)
  const starts = events.filter((e) => e.type === "span.start")
  const workspace = starts.find((e) => e.kind === "workspace")
  expect(workspace).toMatchObject({ kind: "workspace", name: "Workspace", parentSpanId: "trace-0" })
  expect(workspace.spanId).toMatch(/^span-\d+$/)
  const sandbox = starts.find((e) => e.kind === "sandbox")
  expect(sandbox.parentSpanId).toBe(workspace.spanId)
  const end = events.find((e) => e.type === "span.end" && e.spanId === workspace.spanId)
  expect(end).toBeDefined()
})

test("a failed subtree fails the workspace span", async () => {
  const runtime = new AmlRuntime({ workspaceProvider: new DeterministicWorkspaceProvider() })
  const events = traced(runtime, false)
  const Fail = () => {
    throw new Error("subtree")
  }
  await expect(runtime.evaluate(<Workspace><Fail /></Workspace>)).rejects.toThrow("subtree")
  const workspace = events.find((e) => e.type === "span.start" && e.kind === "workspace")
  const end = events.find((e) => e.spanId === workspace.spanId && e.type !== "span.start")
  expect(end).toMatchObject({ type: "span.end", status: "error" })
})
