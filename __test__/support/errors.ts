// Shared helpers for specs that assert how an evaluation fails.

import { EvaluationError } from "@aml-jsx/sdk"
import { expect } from "vitest"

/** The message of the EvaluationError thrown by `evaluate()` outside an active component. */
export const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

/** Resolves with what `promise` rejected with; fails if it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error("expected the evaluation to reject")
    },
    (error: unknown) => error,
  )
}

/** Asserts `error` is exactly of class `type` (not a subclass) with exactly `message`. */
export function expectExact(error: any, type: new (...args: any[]) => Error, message: string): void {
  expect(error).toBeInstanceOf(type)
  expect(error.constructor).toBe(type)
  expect(error.message).toBe(message)
}

/** Asserts `promise` rejects with an EvaluationError carrying exactly `message`. */
export async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(message)
  return error
}
