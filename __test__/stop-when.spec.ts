// The deadline-and-abort rule every SandboxProcess shares (lib/process/stop-when.js).
import { afterEach, describe, expect, it, vi } from "vitest"

import { stopWhen } from "../lib/process/stop-when.js"

afterEach(() => vi.useRealTimers())

describe("stopWhen", () => {
  it("stops at once, with the reason, for a signal that already aborted", () => {
    const controller = new AbortController()
    controller.abort(new Error("gone"))
    const stop = vi.fn()
    stopWhen(controller.signal, 1000, stop)
    expect(stop.mock.calls).toEqual([[controller.signal.reason, "abort"]])
  })

  it("stops once, on whichever comes first", () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const stop = vi.fn()
    stopWhen(controller.signal, 50, stop)
    vi.advanceTimersByTime(50)
    controller.abort()
    expect(stop.mock.calls).toEqual([[undefined, "timeout"]])
  })

  it("does nothing once disarmed", () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const stop = vi.fn()
    const disarm = stopWhen(controller.signal, 50, stop)
    disarm()
    controller.abort()
    vi.advanceTimersByTime(100)
    expect(stop).not.toHaveBeenCalled()
  })

  it("works without a signal or a deadline", () => {
    vi.useFakeTimers()
    const stop = vi.fn()
    stopWhen(undefined, 10, stop)
    vi.advanceTimersByTime(10)
    expect(stop.mock.calls).toEqual([[undefined, "timeout"]])
    expect(() => stopWhen(undefined, undefined, stop)()).not.toThrow()
  })
})
