// Workspace contracts and fixtures: defineWorkspaceProvider (WS-4), the runtime option
// (RT-1), DeterministicWorkspaceProvider (TST-3), workspaceProviderConformance (TST-7), and
// the documented testing-cookbook examples.
import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, defineWorkspaceProvider, Sandbox, Workspace, WorkspaceConflictError } from "@aml-jsx/sdk"
import {
  DeterministicAgentProvider,
  DeterministicSandboxProvider,
  DeterministicWorkspaceProvider,
  workspaceProviderConformance,
} from "@aml-jsx/sdk/testing"

import { expectExact, rejection } from "./support/errors.js"

const SHAPE_ERRORS: [unknown, string][] = [
  [undefined, "Workspace provider must be an object"],
  ["p", "Workspace provider must be an object"],
  [{ name: 1, acquire() {} }, "Workspace provider name must be a non-empty string"],
  [{ name: "p ", acquire() {} }, "Workspace provider name must already be normalized"],
  [{ name: "p", acquire: 1 }, "Workspace provider acquire must be a function"],
]

describe("defineWorkspaceProvider and the runtime option", () => {
  test("validation TypeErrors", () => {
    for (const [provider, message] of SHAPE_ERRORS) {
      expect(() => defineWorkspaceProvider(provider as any)).toThrow(new TypeError(message))
      if (provider !== undefined) {
        expect(() => new AmlRuntime({ workspaceProvider: provider as any })).toThrow(new TypeError(message))
      }
      try {
        defineWorkspaceProvider(provider as any)
      } catch (error) {
        expectExact(error, TypeError, message)
      }
    }
  })

  test("returns the same provider, frozen; performs no I/O", async () => {
    const acquire = vi.fn()
    const provider = { name: "p", acquire }
    expect(defineWorkspaceProvider(provider)).toBe(provider)
    expect(Object.isFrozen(provider)).toBe(true)
    expect(acquire).not.toHaveBeenCalled()
  })

  test("the runtime captures the provider once", async () => {
    const provider: any = new DeterministicWorkspaceProvider()
    const runtime = new AmlRuntime({ workspaceProvider: provider })
    const other = new DeterministicWorkspaceProvider({ name: "other" })
    provider.acquire = other.acquire.bind(other)
    await runtime.evaluate(<Workspace>x</Workspace>)
    expect(provider.acquisitions).toHaveLength(1)
    expect(other.acquisitions).toHaveLength(0)
  })
})

describe("DeterministicWorkspaceProvider", () => {
  test("name validation", () => {
    for (const name of ["", " x", 3]) {
      expect(() => new DeterministicWorkspaceProvider({ name: name as any })).toThrow(
        new TypeError("Deterministic Workspace provider name must be non-empty and normalized"),
      )
    }
    expect(new DeterministicWorkspaceProvider().name).toBe("deterministic-workspace")
  })

  test("records acquisitions, saves and releases; lease ids and default handle", async () => {
    const provider = new DeterministicWorkspaceProvider()
    const signal = new AbortController().signal
    const request = { evaluationId: "e", id: "w", signal }
    const lease: any = await provider.acquire(request)
    expect(lease).toMatchObject({ directory: "/deterministic-workspace", id: "deterministic-workspace-1" })
    // Acquisitions are counted from 0; lease ids from 1.
    expect(lease.handle).toEqual({ acquisition: 0, kind: "deterministic-workspace", request })
    await lease.save({})
    await lease.release()
    await lease.release()
    expect(provider.acquisitions).toEqual([request])
    expect(provider.saves).toEqual(["deterministic-workspace-1"])
    expect(provider.releases).toEqual(["deterministic-workspace-1"])
    expect(Object.isFrozen(provider.acquisitions) && Object.isFrozen(lease)).toBe(true)
    await expect(lease.save({})).rejects.toThrow('Workspace lease "deterministic-workspace-1" was already released')
  })

  test("createHandle then directory, by acquisition index; hooks receive the lease identity and index", async () => {
    const order: string[] = []
    const save = vi.fn(async () => {})
    const release = vi.fn(async () => {})
    const provider = new DeterministicWorkspaceProvider({
      createHandle: (request, n) => (order.push(`handle:${n}`), { custom: n, id: request.id }),
      directory: (request, n) => (order.push(`directory:${n}`), `/w/${request.id}/${n}`),
      release,
      save,
    })
    const signal = new AbortController().signal
    await (await provider.acquire({ evaluationId: "e", id: "a", signal })).release()
    const lease: any = await provider.acquire({ evaluationId: "e", id: "a", signal })
    expect(order).toEqual(["handle:0", "directory:0", "handle:1", "directory:1"])
    expect(lease.directory).toBe("/w/a/1")
    expect(lease.handle).toEqual({ custom: 1, id: "a" })
    await lease.save({ outcome: "success" })
    await lease.release()
    // The save request is not forwarded: hooks get the frozen identity, the same object each time.
    const identity = save.mock.calls[0][0] as any
    expect(save.mock.calls[0]).toEqual([{ directory: "/w/a/1", handle: lease.handle, id: "deterministic-workspace-2" }, 1])
    expect(Object.isFrozen(identity)).toBe(true)
    expect(release.mock.calls[1][0]).toBe(identity)
    expect(release.mock.calls[1][1]).toBe(1)
  })

  test("failed save and release attempts are recorded; a failed release still frees the writer", async () => {
    const failure = new Error("hook failed")
    const provider = new DeterministicWorkspaceProvider({
      save: async () => Promise.reject(failure),
      release: async () => Promise.reject(failure),
    })
    const signal = new AbortController().signal
    const lease: any = await provider.acquire({ evaluationId: "e", id: "x", signal })
    expect(await rejection(lease.save({}))).toBe(failure)
    expect(await rejection(lease.release())).toBe(failure)
    expect(provider.saves).toEqual(["deterministic-workspace-1"])
    expect(provider.releases).toEqual(["deterministic-workspace-1"])
    await expect(provider.acquire({ evaluationId: "e", id: "x", signal })).resolves.toBeDefined()
  })

  test("a failing directory hook after createHandle rolls the writer back", async () => {
    const provider = new DeterministicWorkspaceProvider({
      directory: (_request, n) => {
        if (n === 0) throw new Error("directory setup failed")
        return "/again"
      },
    })
    const signal = new AbortController().signal
    await expect(provider.acquire({ evaluationId: "e", id: "x", signal })).rejects.toThrow("directory setup failed")
    expect((await provider.acquire({ evaluationId: "e", id: "x", signal })).directory).toBe("/again")
  })

  test("one active writer per id; lock:false opts out; a failing hook rolls ownership back", async () => {
    const signal = new AbortController().signal
    let fail = true
    const provider = new DeterministicWorkspaceProvider({
      createHandle: () => {
        if (fail) throw new Error("hook")
        return {}
      },
    })
    await expect(provider.acquire({ evaluationId: "e", id: "x", signal })).rejects.toThrow("hook")
    fail = false
    const first: any = await provider.acquire({ evaluationId: "e", id: "x", signal })
    const conflict = await rejection(provider.acquire({ evaluationId: "e", id: "x", signal }))
    expectExact(conflict, WorkspaceConflictError, 'Workspace "x" already has an active writer')
    expect(WorkspaceConflictError.is(conflict, "x")).toBe(true)
    await expect(provider.acquire({ evaluationId: "e", id: "x", lock: false, signal })).resolves.toBeDefined()
    await first.release()
    await expect(provider.acquire({ evaluationId: "e", id: "x", signal })).resolves.toBeDefined()
  })

  test("a pre-aborted request rejects with the reason", async () => {
    const controller = new AbortController()
    const reason = new Error("stop")
    controller.abort(reason)
    const provider = new DeterministicWorkspaceProvider()
    expect(await rejection(provider.acquire({ evaluationId: "e", id: "x", signal: controller.signal }))).toBe(reason)
    expect(provider.acquisitions).toHaveLength(0)
  })
})

describe("workspaceProviderConformance", () => {
  test("DeterministicWorkspaceProvider conforms", async () => {
    const provider = new DeterministicWorkspaceProvider()
    await expect(workspaceProviderConformance(provider)).resolves.toBeUndefined()
    // The refused second writer is not an acquisition.
    expect(provider.acquisitions.map((r: any) => r.id)).toEqual(["conformance-workspace", "conformance-workspace"])
    expect(provider.saves).toEqual(["deterministic-workspace-1", "deterministic-workspace-2"])
    expect(provider.releases).toEqual(["deterministic-workspace-1", "deterministic-workspace-2"])
  })

  function lenient(overrides: { save?: () => Promise<void>; release?: () => Promise<void> } = {}) {
    let n = 0
    const released: string[] = []
    return {
      released,
      provider: {
        name: "lenient",
        async acquire() {
          const id = `l-${++n}`
          return {
            directory: "/d",
            handle: null,
            id,
            save: overrides.save ?? (async () => {}),
            release:
              overrides.release ??
              (async () => {
                released.push(id)
              }),
          }
        },
      },
    }
  }

  test("a provider that allows concurrent writers fails, releasing both leases", async () => {
    const { provider, released } = lenient()
    const error = await rejection(workspaceProviderConformance(provider))
    expectExact(error, TypeError, 'Workspace provider "lenient" allowed concurrent writers for "conformance-workspace"')
    expect(released).toEqual(["l-2", "l-1"])
  })

  test("…and when releasing fails too: both release failures, flat", async () => {
    const cleanup = new Error("cleanup")
    const { provider } = lenient({ release: async () => Promise.reject(cleanup) })
    const error = await rejection(workspaceProviderConformance(provider))
    expectExact(error, AggregateError, 'Workspace provider "lenient" allowed concurrent writers and cleanup failed')
    expectExact(error.errors[0], TypeError, 'Workspace provider "lenient" allowed concurrent writers for "conformance-workspace"')
    expect(error.errors.slice(1)).toEqual([cleanup, cleanup])
  })

  test("a competing lease that resolves invalid is reported by its validation error", async () => {
    const cleanup = new Error("competing cleanup")
    const released: string[] = []
    let n = 0
    const provider = {
      name: "competitor",
      async acquire() {
        n += 1
        const id = `c-${n}`
        if (n === 2) return { directory: "/d", handle: null, id: " c-2 ", save: async () => {}, release: async () => Promise.reject(cleanup) }
        return { directory: "/d", handle: null, id, save: async () => {}, release: async () => void released.push(id) }
      },
    }
    const error = await rejection(workspaceProviderConformance(provider))
    expectExact(error, AggregateError, 'Workspace provider "competitor" returned an invalid lease and cleanup failed or raced cancellation')
    expectExact(error.errors[0], TypeError, 'Workspace provider "competitor" returned a lease with an invalid id')
    expect(error.errors[1]).toBe(cleanup)
    expect(released).toEqual(["c-1"])
  })

  test("save and release failing together", async () => {
    const saveError = new Error("save")
    const releaseError = new Error("release")
    const provider = new DeterministicWorkspaceProvider({
      save: async () => Promise.reject(saveError),
      release: async () => Promise.reject(releaseError),
    })
    const error = await rejection(workspaceProviderConformance(provider))
    expectExact(error, AggregateError, "Workspace provider failed persistence and cleanup")
    expect(error.errors).toEqual([saveError, releaseError])
  })

  test("invalid providers and leases are reported with the runtime's messages", async () => {
    await expect(workspaceProviderConformance({} as any)).rejects.toThrow(new TypeError("Workspace provider name must be a non-empty string"))
    const error = await rejection(workspaceProviderConformance({ name: "bad", acquire: async () => null } as any))
    expectExact(error, TypeError, 'Workspace provider "bad" returned an invalid lease')
  })
})

describe("testing cookbook examples", () => {
  function ReviewWorkflow() {
    return (
      <Workspace id="release-review" save>
        <Sandbox access="read-only">
          <Agent>Review the release candidate.</Agent>
        </Sandbox>
      </Workspace>
    )
  }

  test("runtime defaults replace omitted providers", async () => {
    const agentProvider = new DeterministicAgentProvider({
      respond: (request) => ({ text: `fixture:${request.prompt}` }),
      supportsSandbox: () => true,
    })
    const sandboxProvider = new DeterministicSandboxProvider()
    const workspaceProvider = new DeterministicWorkspaceProvider()
    const runtime = new AmlRuntime({ agentProvider, sandboxProvider, workspaceProvider })
    await expect(runtime.evaluate(<ReviewWorkflow />)).resolves.toBe("fixture:Review the release candidate.")
    expect(agentProvider.calls).toHaveLength(1)
    expect(sandboxProvider.acquisitions).toHaveLength(1)
    expect(sandboxProvider.releases).toHaveLength(1)
    expect(workspaceProvider.saves).toHaveLength(1)
    expect(workspaceProvider.releases).toHaveLength(1)
  })

  test("select testing providers with NODE_ENV", async () => {
    // src/runtime.ts of the cookbook, verbatim apart from the type import.
    async function createApplicationRuntime(production: () => ConstructorParameters<typeof AmlRuntime>[0]): Promise<AmlRuntime> {
      if (process.env.NODE_ENV !== "test") {
        return new AmlRuntime(production())
      }

      const { DeterministicAgentProvider, DeterministicSandboxProvider, DeterministicWorkspaceProvider } =
        await import("@aml-jsx/sdk/testing")

      return new AmlRuntime({
        agentProvider: new DeterministicAgentProvider({
          supportsSandbox: () => true,
        }),
        sandboxProvider: new DeterministicSandboxProvider(),
        workspaceProvider: new DeterministicWorkspaceProvider(),
      })
    }
    vi.stubEnv("NODE_ENV", "test")
    try {
      const runtime = await createApplicationRuntime(() => {
        throw new Error("production providers must not be constructed in this test")
      })
      await expect(runtime.evaluate(<ReviewWorkflow />)).resolves.toBe("Review the release candidate.")
    } finally {
      vi.unstubAllEnvs()
    }
  })

  test("saves successful Workspace output before release", async () => {
    const save = vi.fn(async () => {})
    const release = vi.fn(async () => {})
    const workspaceProvider = new DeterministicWorkspaceProvider({ save, release })
    await new AmlRuntime({ workspaceProvider }).evaluate(
      <Workspace id="review" load={false} save={{ on: "always" }}>
        ready
      </Workspace>,
    )
    expect(save).toHaveBeenCalledOnce()
    expect(release).toHaveBeenCalledOnce()
    expect(save.mock.invocationCallOrder[0]).toBeLessThan(release.mock.invocationCallOrder[0])
    expect(workspaceProvider.saves).toHaveLength(1)
    expect(workspaceProvider.releases).toHaveLength(1)
  })

  test("the workspace reference page example", async () => {
    const workspace = new DeterministicWorkspaceProvider({ directory: "/workspace/review-42" })
    const runtime = new AmlRuntime({ agentProvider: new DeterministicAgentProvider(), workspaceProvider: workspace })
    await expect(
      runtime.evaluate(
        <Workspace id="review-42" load={false} save={{ on: "success", retention: 3 }}>
          <Agent>Prepare the review result.</Agent>
        </Workspace>,
      ),
    ).resolves.toBe("Prepare the review result.")
    expect(workspace.saves).toEqual(["deterministic-workspace-1"])
  })
})
