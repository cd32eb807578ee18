// Prop type errors remember what they received (lib/errors/prop-error.js), for the hint line
// of `aml run`: on a non-enumerable Symbol.for property, so the error's message, keys and
// JSON stay those of the documented EvaluationError.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Script, Workspace } from "../index.js"
import { describeReceived } from "../lib/errors/prop-error.js"

const RECEIVED = Symbol.for("@aml-jsx/sdk/received-type")

async function rejection(value: unknown): Promise<any> {
  try {
    await new AmlRuntime().evaluate(value as any)
  } catch (error) {
    return error
  }
  throw new Error("expected the evaluation to fail")
}

describe("prop type errors", () => {
  it("carry a description of the received value, invisibly", async () => {
    const error = await rejection(<Agent model={42 as any}>hi</Agent>)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("<Agent> model must be a string")
    expect(error[RECEIVED]).toBe("a number (42)")
    const plain = new EvaluationError("<Agent> model must be a string")
    expect(Object.keys(error)).toEqual(Object.keys(plain))
    expect(Object.getOwnPropertyDescriptor(error, RECEIVED)).toMatchObject({ enumerable: false, writable: false })
    expect(JSON.stringify(error)).toBe(JSON.stringify(plain))
  })

  it("describe each prop's own value", async () => {
    expect((await rejection(<Script command=" ls" />))[RECEIVED]).toBe("a string with leading or trailing whitespace")
    expect((await rejection(<Workspace lock={"yes" as any}>x</Workspace>))[RECEIVED]).toBe("a string")
  })

  it("never show a string's text", () => {
    expect(
      [undefined, null, "", " secret", "secret", 0, Number.NaN, true, [], {}, () => {}, 1n, Symbol("s")].map(describeReceived),
    ).toEqual([
      "undefined", "null", "an empty string", "a string with leading or trailing whitespace", "a string", "a number (0)",
      "a number (NaN)", "a boolean (true)", "an array", "an object", "a function", "a bigint", "a symbol",
    ])
  })
})
