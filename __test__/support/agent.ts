// Helpers for the <Agent> specs (agent-*.spec.tsx): an inline provider that records its calls,
// and the error assertions they share.
import { expect } from "vitest"

import { EvaluationError } from "@aml-jsx/sdk"

import { rejection } from "./errors.js"

export type Call = { request: any; context: any; self: unknown }

/** An inline provider that records every call and answers `respond(request)`. */
export function recorder(name = "p", respond: (request: any, context: any) => unknown = (r) => ({ text: `[${name}:${r.prompt}]` })) {
  const calls: Call[] = []
  const provider = {
    name,
    async run(this: unknown, request: any, context: any) {
      calls.push({ context, request, self: this })
      return respond(request, context)
    },
  }
  return { calls, provider }
}

/** Asserts that `promise` rejects with an EvaluationError (class, name) with exactly `message`. */
export async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.name).toBe("EvaluationError")
  expect(error.message).toBe(message)
  return error
}

/** Asserts that `promise` rejects with a TypeError (not an EvaluationError) with exactly `message`. */
export async function expectTypeError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(TypeError)
  expect(error).not.toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(message)
  return error
}
