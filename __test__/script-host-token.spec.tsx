// A host <Script> releases its cancellation token on every path, including a processExec
// that throws synchronously before any process exists (issue 8 §3). The native module is
// wrapped so one call can be made to throw; everything else is the real addon.
import { describe, expect, test, vi } from "vitest"

import { AmlRuntime, Script } from "@aml-jsx/sdk"

import { liveCancellations } from "../lib/core/native.js"
import { rejection } from "./support/errors.js"

const refusal = new Error("exec refused before starting")
let refuse = false

vi.mock("../lib/core/native.js", async (importOriginal) => {
  const actual: Record<string, unknown> = await importOriginal()
  const processExec = actual.processExec as (...args: unknown[]) => Promise<unknown>
  return {
    ...actual,
    processExec: (...args: unknown[]) => {
      if (refuse) throw refusal
      return processExec(...args)
    },
  }
})

describe("host <Script> cancellation tokens", () => {
  test("a synchronous processExec failure rejects with it and leaks no token", async () => {
    const before = liveCancellations()
    refuse = true
    try {
      const controller = new AbortController()
      const error = await rejection(new AmlRuntime().evaluate(<Script command="true" />, { signal: controller.signal }))
      expect(error).toBe(refusal)
    } finally {
      refuse = false
    }
    expect(liveCancellations()).toBe(before)
  })

  test("a normal, a failing and an aborted run leave no token either", async () => {
    const before = liveCancellations()
    const runtime = new AmlRuntime()
    const signal = new AbortController().signal
    await expect(runtime.evaluate(<Script command="true" />, { signal })).resolves.toBe("")
    await rejection(runtime.evaluate(<Script command="false" />, { signal }))
    const controller = new AbortController()
    const running = rejection(runtime.evaluate(<Script command="sleep" args={["5"]} />, { signal: controller.signal }))
    setTimeout(() => controller.abort("halt"), 20)
    expect(await running).toBe("halt")
    expect(liveCancellations()).toBe(before)
  })
})
