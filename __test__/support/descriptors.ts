// Helpers for the <System> and <FollowUp> specs (system-*.spec.tsx, follow-up.spec.tsx): an
// inline provider that records its requests, pass-through components and a runtime factory.
import { expect } from "vitest"

import { AmlRuntime, EvaluationError } from "@aml-jsx/sdk"

import { rejection } from "./errors.js"

export type Call = { request: any }

/** An inline provider that records each request (only the request) and answers `respond(request)`. */
export function recorder(name = "p", respond: (request: any) => unknown = (r) => ({ text: `[${name}:${r.prompt}]` })) {
  const calls: Call[] = []
  const provider = {
    name,
    async run(request: any) {
      calls.push({ request })
      return respond(request)
    },
  }
  return { calls, provider }
}

/** Asserts that `promise` rejects with an EvaluationError with exactly `message`. */
export async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<any> {
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(message)
  return error
}

export function Pass(props: { children?: unknown }) {
  return props.children as any
}

export async function AsyncPass(props: { children?: unknown }) {
  await new Promise((resolve) => setTimeout(resolve, 1))
  return props.children as any
}

export const runtimeWith = (provider: any, options: Record<string, unknown> = {}) =>
  new AmlRuntime({ agentProvider: provider, ...options } as any)
