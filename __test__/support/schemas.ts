// Shared helpers for the Tool and structured-output specs: hand-made Standard Schema
// objects (for the malformed cases no real library produces) and failure capture.

import { expect } from "vitest"

/** Calls `fn` and returns what it threw synchronously or what its promise rejected with. */
export async function failureOf(fn: () => unknown): Promise<any> {
  let result: unknown
  try {
    result = fn()
  } catch (error) {
    return error
  }
  try {
    await result
  } catch (error) {
    return error
  }
  throw new Error("expected a failure")
}

/** Asserts the error's class (by constructor and name) and exact message. */
export function expectError(error: any, type: new (...args: any[]) => Error, message: string) {
  expect(error).toBeInstanceOf(type)
  expect(error.name).toBe(type.name)
  expect(error.message).toBe(message)
}

type Validate = (value: unknown) => unknown

/**
 * A Standard Schema with a given validator and JSON Schema converter. `jsonSchema: null`
 * leaves out the Standard JSON Schema half.
 */
export function customSchema(
  validate: Validate,
  jsonSchema: (() => unknown) | null = () => ({ type: "object" }),
): any {
  const standard: Record<string, unknown> = { validate, vendor: "test", version: 1 }
  if (jsonSchema !== null) standard.jsonSchema = { input: jsonSchema, output: jsonSchema }
  return { "~standard": standard }
}

/** Accepts anything, unchanged. */
export const anything = customSchema((value) => ({ value }))

/** A schema accepting only objects, with a JSON Schema to match. */
export const anyObject = customSchema((value) =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? { value }
    : { issues: [{ message: "expected an object" }] },
)

/** A minimal class whose instances are not plain data. */
export class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

/** Values that are not JSON, with the `${label} contains …` cause suffix each must give. */
export function nonJsonCases(): Array<[string, unknown, string]> {
  const cycle: Record<string, unknown> = { a: 1 }
  cycle.self = cycle
  const cyclicArray: unknown[] = [1]
  cyclicArray.push([cyclicArray])
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 3]
  return [
    ["undefined", undefined, "unsupported undefined data"],
    ["an undefined property", { a: undefined }, "unsupported undefined data"],
    ["a BigInt", { n: 1n }, "unsupported bigint data"],
    ["NaN", [NaN], "a non-finite number"],
    ["Infinity", { x: Infinity }, "a non-finite number"],
    ["-Infinity", -Infinity, "a non-finite number"],
    ["a function", { f() {} }, "unsupported function data"],
    ["a symbol value", [Symbol("s")], "unsupported symbol data"],
    ["symbol keys", { [Symbol("k")]: 1 }, "symbol keys"],
    ["a class instance", { p: new Point(1, 2) }, "a non-plain object"],
    ["a Map", new Map([["a", 1]]), "a non-plain object"],
    ["a Set", { s: new Set([1]) }, "a non-plain object"],
    ["a Date", new Date(0), "a non-plain object"],
    ["a sparse array", { list: sparse }, "a sparse array"],
    ["an object cycle", cycle, "a cycle"],
    ["an array cycle", cyclicArray, "a cycle"],
  ]
}

/** `depth` nested single-element arrays around `leaf`, built without recursion. */
export function deepArray(depth: number, leaf: unknown = 0): unknown {
  let value: unknown = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}
