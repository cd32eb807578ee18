// ProcessSignalCancellation (INVENTORY LIM-3). Listener bookkeeping and option validation run
// in this process; anything that delivers a real signal or exits runs in a child node process.
import { spawn } from "node:child_process"
import { fileURLToPath, pathToFileURL } from "node:url"

import { ProcessSignalCancellation } from "@aml-jsx/sdk"
import { afterEach, describe, expect, it, vi } from "vitest"

const ENTRY = pathToFileURL(fileURLToPath(new URL("../index.js", import.meta.url))).href
const DEADLINE_TEXT = "Process signal cleanupDeadlineMs must be a non-negative safe integer"

const counts = () => [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]

/** The listener `create()` added for `name`, called directly so no other listener runs. */
function ownListener(name: "SIGINT" | "SIGTERM", create: () => ProcessSignalCancellation) {
  const before = new Set(process.listeners(name))
  const instance = create()
  const added = process.listeners(name).filter((listener) => !before.has(listener))
  expect(added).toHaveLength(1)
  return { instance, fire: added[0] as () => void }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("ProcessSignalCancellation in process", () => {
  it("installs one SIGINT and one SIGTERM listener and dispose() removes them, once", () => {
    const [sigint, sigterm] = counts()
    const cancellation = new ProcessSignalCancellation()
    expect(counts()).toEqual([sigint + 1, sigterm + 1])
    expect(cancellation.signal).toBeInstanceOf(AbortSignal)
    expect(cancellation.signal.aborted).toBe(false)
    expect(cancellation.exitCode).toBeUndefined()
    cancellation.dispose()
    expect(counts()).toEqual([sigint, sigterm])
    cancellation.dispose()
    expect(counts()).toEqual([sigint, sigterm])
  })

  it("rejects an invalid cleanupDeadlineMs with the exact RangeError and installs nothing", () => {
    const before = counts()
    for (const cleanupDeadlineMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "10", null]) {
      const call = () => new ProcessSignalCancellation({ cleanupDeadlineMs } as never)
      expect(call).toThrow(RangeError)
      expect(call).toThrow(new RangeError(DEADLINE_TEXT))
    }
    expect(counts()).toEqual(before)
    for (const cleanupDeadlineMs of [0, 1, Number.MAX_SAFE_INTEGER, undefined]) {
      new ProcessSignalCancellation({ cleanupDeadlineMs }).dispose()
    }
    expect(counts()).toEqual(before)
  })

  it("aborts with the signal's reason, reports 130/143, and exits on a second signal", () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never)
    const sigint = ownListener("SIGINT", () => new ProcessSignalCancellation({ cleanupDeadlineMs: 60_000 }))
    sigint.fire()
    expect(sigint.instance.signal.aborted).toBe(true)
    expect(sigint.instance.signal.reason).toBeInstanceOf(Error)
    expect((sigint.instance.signal.reason as Error).message).toBe("AML evaluation interrupted by SIGINT")
    expect(sigint.instance.exitCode).toBe(130)
    expect(exit).not.toHaveBeenCalled()
    sigint.fire()
    expect(exit).toHaveBeenCalledExactlyOnceWith(130)
    sigint.instance.dispose()

    exit.mockClear()
    const sigterm = ownListener("SIGTERM", () => new ProcessSignalCancellation())
    sigterm.fire()
    expect((sigterm.instance.signal.reason as Error).message).toBe("AML evaluation interrupted by SIGTERM")
    expect(sigterm.instance.exitCode).toBe(143)
    expect(exit).not.toHaveBeenCalled()
    sigterm.instance.dispose()
  })

  it("force-exits after the deadline unless dispose() clears the timer first", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never)
    const late = ownListener("SIGTERM", () => new ProcessSignalCancellation({ cleanupDeadlineMs: 20 }))
    const disposed = ownListener("SIGINT", () => new ProcessSignalCancellation({ cleanupDeadlineMs: 20 }))
    late.fire()
    disposed.fire()
    disposed.instance.dispose()
    await new Promise((resolve) => setTimeout(resolve, 80))
    expect(exit).toHaveBeenCalledExactlyOnceWith(143)
    late.instance.dispose()
  })
})

interface ChildResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string[]
  /** Milliseconds from the first signal sent to exit. */
  afterSignalMs: number
}

/**
 * Runs `body` as an ESM script importing the package as `sdk`. Each time the child prints a
 * line, `onLine(line, child)` may send signals. The child must print "ready" first.
 */
function runChild(body: string, onLine: (line: string, kill: (sig: NodeJS.Signals) => void) => void) {
  const script = `const sdk = await import(${JSON.stringify(ENTRY)});\n${body}`
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] })
  return new Promise<ChildResult>((resolve, reject) => {
    const stdout: string[] = []
    let stderr = ""
    let signalledAt: number | undefined
    const kill = (sig: NodeJS.Signals) => {
      signalledAt ??= performance.now()
      child.kill(sig)
    }
    let buffered = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      let newline = buffered.indexOf("\n")
      while (newline >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        stdout.push(line)
        onLine(line, kill)
        newline = buffered.indexOf("\n")
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const guard = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`child timed out; stdout=${stdout.join("|")} stderr=${stderr}`))
    }, 15_000)
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      clearTimeout(guard)
      if (stderr !== "") console.error(stderr)
      resolve({ code, signal, stdout, afterSignalMs: performance.now() - (signalledAt ?? performance.now()) })
    })
  })
}

// The child keeps itself alive with an interval (standing in for an evaluation still
// cleaning up) and reports what the abort listener saw.
const REPORT_ABORT = `
const keepAlive = setInterval(() => {}, 1000)
cancellation.signal.addEventListener("abort", () => {
  console.log(JSON.stringify({ reason: cancellation.signal.reason.message, exitCode: cancellation.exitCode }))
})
console.log("ready")
`

describe("ProcessSignalCancellation with real signals (child process)", () => {
  it("importing the package installs no SIGINT/SIGTERM listener", async () => {
    const result = await runChild(
      `console.log(JSON.stringify([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM"), typeof sdk.ProcessSignalCancellation]))`,
      () => {},
    )
    expect(result.stdout).toEqual(['[0,0,"function"]'])
    expect(result.code).toBe(0)
  })

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("graceful path: %s aborts, cleanup finishes, exitCode %i is preserved", async (sig, expected) => {
    const body = `
const cancellation = new sdk.ProcessSignalCancellation()
${REPORT_ABORT}
cancellation.signal.addEventListener("abort", () => {
  clearInterval(keepAlive)
  cancellation.dispose()
  process.exitCode = cancellation.exitCode
})`
    const result = await runChild(body, (line, kill) => line === "ready" && kill(sig))
    expect(result.stdout).toEqual(["ready", JSON.stringify({ reason: `AML evaluation interrupted by ${sig}`, exitCode: expected })])
    expect(result).toMatchObject({ code: expected, signal: null })
  })

  it.each([
    ["SIGINT", "SIGTERM", 143],
    ["SIGTERM", "SIGINT", 130],
    ["SIGINT", "SIGINT", 130],
  ] as const)("a second signal (%s then %s) exits at once with %i", async (first, second, expected) => {
    const body = `
const cancellation = new sdk.ProcessSignalCancellation({ cleanupDeadlineMs: 60000 })
${REPORT_ABORT}`
    const result = await runChild(body, (line, kill) => {
      if (line === "ready") kill(first)
      else kill(second)
    })
    expect(result.stdout[1]).toBe(JSON.stringify({ reason: `AML evaluation interrupted by ${first}`, exitCode: first === "SIGINT" ? 130 : 143 }))
    // Exited through process.exit (a code, no terminating signal), long before the deadline.
    expect(result).toMatchObject({ code: expected, signal: null })
    expect(result.afterSignalMs).toBeLessThan(10_000)
  })

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("deadline path: stuck cleanup after %s is force-exited with %i", async (sig, expected) => {
    const body = `
const cancellation = new sdk.ProcessSignalCancellation({ cleanupDeadlineMs: 300 })
${REPORT_ABORT}`
    const result = await runChild(body, (line, kill) => line === "ready" && kill(sig))
    expect(result.stdout).toHaveLength(2)
    expect(result).toMatchObject({ code: expected, signal: null })
    expect(result.afterSignalMs).toBeGreaterThanOrEqual(250)
    expect(result.afterSignalMs).toBeLessThan(10_000)
  })

  it("the deadline timer is unref'd: finished work ends the process without waiting for it", async () => {
    const body = `
const cancellation = new sdk.ProcessSignalCancellation({ cleanupDeadlineMs: 60000 })
${REPORT_ABORT}
cancellation.signal.addEventListener("abort", () => clearInterval(keepAlive))`
    const result = await runChild(body, (line, kill) => line === "ready" && kill("SIGINT"))
    // Nobody set process.exitCode and nothing forced an exit: a normal, prompt exit 0.
    expect(result).toMatchObject({ code: 0, signal: null })
    expect(result.afterSignalMs).toBeLessThan(10_000)
  })
})
