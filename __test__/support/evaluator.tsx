// Helpers for the evaluator specs (evaluator-*.spec.tsx): a one-shot `run`, the EvaluationError
// assertion they share, and small pass-through and nesting components.
import { setTimeout as sleep } from "node:timers/promises"

import { expect } from "vitest"

import { AmlRuntime, EvaluationError } from "@aml-jsx/sdk"

import { rejection } from "./errors.js"

export type Props = { readonly children?: unknown }

export const run = (value: unknown, options?: Record<string, unknown>): Promise<string> =>
  new AmlRuntime(options as never).evaluate(value as never)

export async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<EvaluationError> {
  await expect(promise).rejects.toThrow(message)
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error).toBeInstanceOf(Error)
  expect((error as Error).name).toBe("EvaluationError")
  expect((error as Error).message).toBe(message)
  return error as EvaluationError
}

export function Pass(props: Props) {
  return props.children
}

export async function AsyncPass(props: Props) {
  await sleep(1)
  return props.children
}

/** A chain of `n` nested component nodes ending in "leaf". */
export function Level(props: { readonly n: number }): unknown {
  return props.n > 1 ? <Level n={props.n - 1} /> : "leaf"
}

export async function AsyncLevel(props: { readonly n: number }): Promise<unknown> {
  await Promise.resolve()
  return props.n > 1 ? <AsyncLevel n={props.n - 1} /> : "leaf"
}
