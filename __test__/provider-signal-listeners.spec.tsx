// Many concurrent provider calls listening to `context.signal` (docs/RUNTIME.md "Cancellation"):
// AML's own signal (the caller passed none) takes them without Node's listener warning; a
// caller's signal is left as the caller made it.
import { afterEach, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, evaluate } from "@aml-jsx/sdk"

const warnings: Error[] = []
const onWarning = (warning: Error) => {
  if (warning.name === "MaxListenersExceededWarning") warnings.push(warning)
}

// The second test provokes Node's warning on purpose. It is captured there, not printed: the
// listeners Node (and the runner) had for warnings step aside until the test ends, so a green
// run does not show a leak warning that is the expected result.
let muted: ((...args: any[]) => void)[] = []
const muteOtherWarningListeners = () => {
  muted = process.listeners("warning") as typeof muted
  for (const listener of muted) process.removeListener("warning", listener)
}

afterEach(() => {
  process.removeListener("warning", onWarning)
  for (const listener of muted) process.on("warning", listener)
  muted = []
  warnings.length = 0
})

/** A cooperative provider: each call listens for the abort while it waits a turn. */
const cooperative = {
  name: "cooperative",
  async run(request: { prompt: string }, context: { signal: AbortSignal }) {
    await new Promise<void>((resolve) => {
      context.signal.addEventListener("abort", () => resolve(), { once: true })
      setImmediate(resolve)
    })
    return { text: request.prompt }
  },
}

function FanOut() {
  return Promise.all(Array.from({ length: 25 }, (_, i) => evaluate(<Agent>{`t${i}`}</Agent>))).then((texts) => texts.length)
}

/** Node emits the warning on a later tick: wait for it to have had the chance. */
const settleWarnings = () => new Promise((resolve) => setImmediate(resolve))

describe("listeners on context.signal", () => {
  it("25 concurrent provider calls on AML's own signal raise no listener warning", async () => {
    process.on("warning", onWarning)
    await expect(new AmlRuntime({ agentProvider: cooperative }).evaluate(<FanOut />)).resolves.toBe("25")
    await settleWarnings()
    expect(warnings).toEqual([])
  })

  it("a caller's signal keeps the limit its owner gave it", async () => {
    muteOtherWarningListeners()
    process.on("warning", onWarning)
    const controller = new AbortController()
    await expect(new AmlRuntime({ agentProvider: cooperative }).evaluate(<FanOut />, { signal: controller.signal })).resolves.toBe("25")
    await settleWarnings()
    expect(warnings).toHaveLength(1)
  })
})
