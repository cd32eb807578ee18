// Sandbox provider authoring and fixtures (INVENTORY PA-9, PA-10, PA-11, TST-2, TST-6).
import { describe, expect, test } from "vitest"

import { AbstractSandboxProvider, SandboxCommand, defineSandboxProvider } from "@aml-jsx/sdk"
import type { ProvisionedSandbox, SandboxAcquireRequest, SandboxRuntime } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider, sandboxProviderConformance } from "@aml-jsx/sdk/testing"
import { rejection } from "./support/errors.js"

const signal = () => new AbortController().signal
const request = (overrides: Partial<SandboxAcquireRequest> = {}): SandboxAcquireRequest =>
  Object.freeze({ access: "read-write", cwd: "repo/src", evaluationId: "e", root: "repo", signal: signal(), ...overrides })

describe("defineSandboxProvider (PA-9)", () => {
  test("returns the same object frozen; validates with the runtime's TypeErrors", () => {
    const provider = { name: "p", acquire: async () => ({}) as any }
    expect(defineSandboxProvider(provider)).toBe(provider)
    expect(Object.isFrozen(provider)).toBe(true)
    expect(() => defineSandboxProvider(null as any)).toThrow(new TypeError("Sandbox provider must be an object"))
    expect(() => defineSandboxProvider({ name: "", acquire() {} } as any)).toThrow("Sandbox provider name must be a non-empty string")
    expect(() => defineSandboxProvider({ name: "p ", acquire() {} } as any)).toThrow("Sandbox provider name must already be normalized")
    expect(() => defineSandboxProvider({ name: "p" } as any)).toThrow("Sandbox provider acquire must be a function")
  })
})

/** A staged provider that logs each stage and can fail any of them. */
class Staged extends AbstractSandboxProvider<"staged", string, { n: number }> {
  log: string[] = []
  fail = new Set<string>()
  constructor(readonly hooks: { onInitialize?: () => void; cleanup?: boolean } = {}) {
    super("staged")
  }
  private step(stage: string) {
    this.log.push(stage)
    if (this.fail.has(stage)) throw new Error(`${stage} failed`)
  }
  protected async provision(req: SandboxAcquireRequest): Promise<ProvisionedSandbox<string, { n: number }>> {
    this.step("provision")
    return { handle: `handle:${req.root}`, id: "staged-1", resource: { n: 1 } }
  }
  protected createRuntime(_p: ProvisionedSandbox<string, { n: number }>, req: SandboxAcquireRequest): SandboxRuntime {
    this.step("createRuntime")
    return { access: req.access, cwd: req.cwd, root: req.root, exec: async () => ({ exitCode: 0, stderr: "", stdout: "" }), spawn: async () => ({}) as any }
  }
  protected override async initialize() {
    this.step("initialize")
    this.hooks.onInitialize?.()
  }
  protected async releaseResource(p: ProvisionedSandbox<string, { n: number }>) {
    this.step(`release:${p.resource.n}`)
  }
}

describe("AbstractSandboxProvider (PA-10)", () => {
  test("stages in order; the lease is frozen and release() is memoised", async () => {
    const provider = new Staged()
    const lease = await provider.acquire(request())
    expect(provider.log).toEqual(["provision", "createRuntime", "initialize"])
    expect(Object.isFrozen(lease)).toBe(true)
    expect(Object.keys(lease)).toEqual(["handle", "id", "release", "runtime"])
    expect(lease).toMatchObject({ handle: "handle:repo", id: "staged-1" })
    await Promise.all([lease.release(), lease.release()])
    await lease.release()
    expect(provider.log.filter((entry) => entry.startsWith("release"))).toEqual(["release:1"])
  })

  test("a pre-aborted signal rejects with its reason before provisioning", async () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    controller.abort(reason)
    const provider = new Staged()
    expect(await rejection(provider.acquire(request({ signal: controller.signal })))).toBe(reason)
    expect(provider.log).toEqual([])
  })

  test("an abort after provisioning compensates and rejects with the reason", async () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    const provider = new Staged({ onInitialize: () => controller.abort(reason) })
    expect(await rejection(provider.acquire(request({ signal: controller.signal })))).toBe(reason)
    expect(provider.log).toEqual(["provision", "createRuntime", "initialize", "release:1"])
  })

  test("a stage failure compensates; a compensation failure aggregates", async () => {
    const provider = new Staged()
    provider.fail.add("createRuntime")
    const error = await rejection(provider.acquire(request()))
    expect(error.message).toBe("createRuntime failed")
    expect(provider.log).toEqual(["provision", "createRuntime", "release:1"])
    provider.log.length = 0
    provider.fail.add("release:1")
    const aggregate = await rejection(provider.acquire(request()))
    expect(aggregate).toBeInstanceOf(AggregateError)
    expect(aggregate.message).toBe('Sandbox provider "staged" acquisition and cleanup failed')
    expect(aggregate.errors.map((e: Error) => e.message)).toEqual(["createRuntime failed", "release:1 failed"])
  })

  test("a provisioning failure has nothing to compensate; cleanupProvisioned can be overridden", async () => {
    const provider = new Staged()
    provider.fail.add("provision")
    expect((await rejection(provider.acquire(request()))).message).toBe("provision failed")
    expect(provider.log).toEqual(["provision"])
    class Custom extends Staged {
      protected override async cleanupProvisioned() {
        this.log.push("custom cleanup")
      }
    }
    const custom = new Custom()
    custom.fail.add("initialize")
    await rejection(custom.acquire(request()))
    expect(custom.log).toEqual(["provision", "createRuntime", "initialize", "custom cleanup"])
  })

  test("passes sandboxProviderConformance", async () => {
    const provider = new Staged()
    await sandboxProviderConformance(provider)
    expect(provider.log).toEqual(["provision", "createRuntime", "initialize", "release:1"])
  })
})

describe("SandboxCommand.from (PA-11)", () => {
  test("defaults and freezing", () => {
    const req = request()
    const command = SandboxCommand.from(req, "node", ["-e", "1"])
    expect(command).toBeInstanceOf(SandboxCommand)
    expect(command).toEqual({ args: ["-e", "1"], command: "node", cwd: "repo/src", env: {}, signal: req.signal })
    expect("timeoutMs" in command).toBe(false)
    expect(Object.isFrozen(command) && Object.isFrozen(command.args) && Object.isFrozen(command.env)).toBe(true)
    const own = signal()
    const custom = SandboxCommand.from(req, "ls", [], { cwd: "repo", env: { A_1: "x" }, signal: own, timeoutMs: 5 })
    expect(custom).toMatchObject({ cwd: "repo", env: { A_1: "x" }, signal: own, timeoutMs: 5 })
    expect(SandboxCommand.from(request({ root: ".", cwd: "." }), "ls").cwd).toBe(".")
  })

  const errors: [string, () => unknown, string, ErrorConstructor][] = [
    ["empty command", () => SandboxCommand.from(request(), ""), "Sandbox command must be a non-empty string without null bytes", TypeError],
    ["NUL command", () => SandboxCommand.from(request(), "a\0b"), "Sandbox command must be a non-empty string without null bytes", TypeError],
    ["args not array", () => SandboxCommand.from(request(), "a", "x" as any), "Sandbox command arguments must be strings without null bytes", TypeError],
    ["NUL arg", () => SandboxCommand.from(request(), "a", ["\0"]), "Sandbox command arguments must be strings without null bytes", TypeError],
    ["options null", () => SandboxCommand.from(request(), "a", [], null as any), "Sandbox command options must be an object", TypeError],
    ["absolute cwd", () => SandboxCommand.from(request(), "a", [], { cwd: "/repo" }), "Sandbox command cwd must be a normalized relative forward-slash path", TypeError],
    ["unnormalized cwd", () => SandboxCommand.from(request(), "a", [], { cwd: "repo/./src" }), "Sandbox command cwd must be a normalized relative forward-slash path", TypeError],
    ["backslash cwd", () => SandboxCommand.from(request(), "a", [], { cwd: "repo\\src" }), "Sandbox command cwd must be a normalized relative forward-slash path", TypeError],
    ["outside cwd", () => SandboxCommand.from(request(), "a", [], { cwd: "other" }), "Sandbox command cwd resolves outside its configured root", TypeError],
    ["prefix cwd", () => SandboxCommand.from(request(), "a", [], { cwd: "repository" }), "Sandbox command cwd resolves outside its configured root", TypeError],
    ["parent cwd", () => SandboxCommand.from(request({ root: "." }), "a", [], { cwd: "../x" }), "Sandbox command cwd resolves outside its configured root", TypeError],
    ["env array", () => SandboxCommand.from(request(), "a", [], { env: [] as any }), "Sandbox command environment must be an object", TypeError],
    ["env key", () => SandboxCommand.from(request(), "a", [], { env: { "1A": "x" } }), "Sandbox command environment contains an invalid entry", TypeError],
    ["env value", () => SandboxCommand.from(request(), "a", [], { env: { A: 1 as any } }), "Sandbox command environment contains an invalid entry", TypeError],
    ["timeout 0", () => SandboxCommand.from(request(), "a", [], { timeoutMs: 0 }), "Sandbox command timeoutMs must be a positive timer-safe integer", RangeError],
    ["timeout big", () => SandboxCommand.from(request(), "a", [], { timeoutMs: 2 ** 31 }), "Sandbox command timeoutMs must be a positive timer-safe integer", RangeError],
    ["timeout float", () => SandboxCommand.from(request(), "a", [], { timeoutMs: 1.5 }), "Sandbox command timeoutMs must be a positive timer-safe integer", RangeError],
  ]
  test.each(errors)("%s", (_, call, message, type) => {
    expect(call).toThrow(new type(message))
    expect(call).toThrow(type)
  })

  test("an aborted signal throws its reason; the largest timer is accepted", () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    controller.abort(reason)
    expect(() => SandboxCommand.from(request({ signal: controller.signal }), "a")).toThrow(reason)
    expect(SandboxCommand.from(request(), "a", [], { timeoutMs: 2 ** 31 - 1 }).timeoutMs).toBe(2 ** 31 - 1)
  })
})

describe("DeterministicSandboxProvider (TST-2)", () => {
  test("name validation", () => {
    expect(() => new DeterministicSandboxProvider({ name: "" })).toThrow(new TypeError("Deterministic Sandbox provider name must not be empty"))
    expect(() => new DeterministicSandboxProvider({ name: " x" })).toThrow(new TypeError("Deterministic Sandbox provider name must already be normalized"))
  })

  test("records acquisitions and releases; ids, handles and the default runtime", async () => {
    const provider = new DeterministicSandboxProvider()
    const req = request()
    const first = await provider.acquire(req)
    const second = await provider.acquire(request({ access: "read-only" }))
    expect([first.id, second.id]).toEqual(["deterministic-sandbox-1", "deterministic-sandbox-2"])
    expect(first.handle).toEqual({ acquisition: 0, kind: "deterministic-sandbox", request: req })
    expect(first.runtime).toMatchObject({ access: "read-write", cwd: "repo/src", root: "repo" })
    expect(await first.runtime.exec("git", ["status", "--short"])).toEqual({ exitCode: 0, stderr: "", stdout: "git status --short" })
    const process = await first.runtime.spawn("echo", ["hi"])
    expect(process.id).toBe("deterministic-process:echo")
    expect(await new Response(process.stdout).text()).toBe("echo hi")
    expect(await new Response(process.stderr).text()).toBe("")
    expect(await process.wait()).toEqual({ exitCode: 0 })
    await second.release()
    await second.release()
    await first.release()
    expect(provider.releases).toEqual(["deterministic-sandbox-2", "deterministic-sandbox-1"])
    expect(provider.acquisitions).toHaveLength(2)
    expect(Object.isFrozen(provider.acquisitions) && Object.isFrozen(provider.releases)).toBe(true)
  })

  test("hooks receive the lease's request, the caller's options and the 0-based acquisition", async () => {
    const calls: unknown[] = []
    const provider = new DeterministicSandboxProvider<{ custom: number }>({
      name: "hooks",
      createHandle: (_req, n) => ({ custom: n }),
      exec: (command, args, request, options) => (calls.push([command, args, request, options]), { exitCode: 3, stderr: "e", stdout: "o" }),
      release: (lease, acquisition) => void calls.push(["release", lease, acquisition]),
    })
    const req = request()
    const lease = await provider.acquire(req)
    const options = { cwd: "repo" }
    expect(await lease.runtime.exec("x", ["y"], options)).toEqual({ exitCode: 3, stderr: "e", stdout: "o" })
    await lease.release()
    expect(calls).toEqual([["x", ["y"], req, options], ["release", { handle: { custom: 0 }, id: "hooks-1" }, 0]])
    expect((calls[0] as unknown[])[2]).toBe(req)
    expect((calls[0] as unknown[])[3]).toBe(options)
  })

  test("an aborted request rejects with the reason and records nothing", async () => {
    const reason = new Error("stop")
    const controller = new AbortController()
    controller.abort(reason)
    const provider = new DeterministicSandboxProvider()
    expect(await rejection(provider.acquire(request({ signal: controller.signal })))).toBe(reason)
    expect(provider.acquisitions).toEqual([])
  })
})

describe("sandboxProviderConformance (TST-6)", () => {
  test("passes and releases for the deterministic provider", async () => {
    const provider = new DeterministicSandboxProvider()
    await sandboxProviderConformance(provider)
    expect(provider.acquisitions[0]).toMatchObject({ access: "read-only", cwd: ".", evaluationId: "sandbox-provider-conformance", root: "." })
    expect(provider.releases).toEqual(["deterministic-sandbox-1"])
  })

  /** A provider whose runtime reports `overrides` and whose release may fail. */
  function drifting(overrides: Record<string, unknown>, releaseError?: Error) {
    const released: string[] = []
    const provider = {
      name: "drift",
      async acquire(req: SandboxAcquireRequest) {
        const runtime = { access: req.access, cwd: req.cwd, root: req.root, exec: async () => ({}), spawn: async () => ({}), ...overrides }
        return { handle: null, id: "d-1", runtime, release: async () => (released.push("d-1"), releaseError && Promise.reject(releaseError)) }
      },
    }
    return { provider, released }
  }

  test.each([{ access: "read-write" }, { cwd: "x" }, { root: "x" }])("a runtime that changes %j fails; the lease is released", async (overrides) => {
    const { provider, released } = drifting(overrides)
    const error = await rejection(sandboxProviderConformance(provider as any))
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe('Sandbox provider "drift" runtime must preserve the acquired access, cwd, and root')
    expect(released).toEqual(["d-1"])
  })

  test("a failing cleanup aggregates; lease validation uses the runtime's TypeErrors", async () => {
    const cleanup = new Error("release failed")
    const error = await rejection(sandboxProviderConformance(drifting({ cwd: "x" }, cleanup).provider as any))
    expect(error).toBeInstanceOf(AggregateError)
    expect(error.message).toBe('Sandbox provider "drift" failed conformance and cleanup')
    expect(error.errors[1]).toBe(cleanup)
    const { provider, released } = drifting({ spawn: undefined })
    expect((await rejection(sandboxProviderConformance(provider as any))).message).toBe('Sandbox provider "drift" returned a runtime without spawn()')
    expect(released).toEqual(["d-1"])
    await expect(sandboxProviderConformance({ name: "x" } as any)).rejects.toThrow("Sandbox provider acquire must be a function")
  })
})
