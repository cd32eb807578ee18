// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — normalisation of text values and the
// values that cannot render.
import { describe, expect, test, vi } from "vitest"

import { expectEvaluationError, Pass, run } from "./support/evaluator.js"

describe("text values", () => {
  test("a string appends its exact characters", async () => {
    expect(await run("  hello\n\tworld  ")).toBe("  hello\n\tworld  ")
    expect(await run("")).toBe("")
    expect(await run("emoji 🎉 and \u0000 nul")).toBe("emoji 🎉 and \u0000 nul")
  })

  test("a number appends String(n)", async () => {
    expect(await run(42)).toBe("42")
    expect(await run(1.5)).toBe("1.5")
    expect(await run(-0)).toBe("0")
    expect(await run(-7)).toBe("-7")
    expect(await run(Number.NaN)).toBe("NaN")
    expect(await run(Number.POSITIVE_INFINITY)).toBe("Infinity")
    expect(await run(1e21)).toBe("1e+21")
    expect(await run(0.1 + 0.2)).toBe("0.30000000000000004")
  })

  test("null, undefined and booleans add nothing", async () => {
    expect(await run(null)).toBe("")
    expect(await run(undefined)).toBe("")
    expect(await run(true)).toBe("")
    expect(await run(false)).toBe("")
    expect(await run(["a", null, undefined, true, false, "b"])).toBe("ab")
  })

  test("nested arrays concatenate in order with no separator", async () => {
    expect(await run(["a", ["b", ["c", [], [[["d"]]]], "e"], 1, [2, [3]]])).toBe("abcde123")
    expect(await run([])).toBe("")
    expect(await run([[], [[]]])).toBe("")
  })

  test("JSX children mix text, numbers and expressions in authored order", async () => {
    const name = "AML"
    expect(
      await run(
        <Pass>
          Hello {name}, {1}
          {false}
          {null}+{2}
        </Pass>,
      ),
    ).toBe("Hello AML, 1+2")
  })

  test("holes in sparse arrays add nothing", async () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(await run(["a", , "b", , ,])).toBe("ab")
    expect(await run(new Array(5))).toBe("")
  })

  test("the same array may appear twice as siblings (not a cycle)", async () => {
    const shared = ["x", "y"]
    expect(await run([shared, "-", shared, [shared]])).toBe("xy-xyxy")
  })
})

describe("values that cannot render", () => {
  test.each([
    ["object", {}],
    ["object", new Map([["a", 1]])],
    ["object", new Date(0)],
    ["object", new String("boxed")],
    ["object", Object.create(null)],
    ["object", new Uint8Array([65, 66])],
    ["function", () => "never called"],
    ["symbol", Symbol("s")],
    ["bigint", 10n],
  ])("a value of type %s rejects", async (type, value) => {
    await expectEvaluationError(run(value), `AML cannot render a value of type ${type}`)
    await expectEvaluationError(run(["ok", [value]]), `AML cannot render a value of type ${type}`)
  })

  test("a function child is never called", async () => {
    const child = vi.fn(() => "x")
    await expectEvaluationError(run(<Pass>{child}</Pass>), "AML cannot render a value of type function")
    expect(child).not.toHaveBeenCalled()
  })

  test("a component returning a plain object rejects", async () => {
    function ReturnsObject() {
      return { text: "hello" }
    }
    async function AsyncReturnsBigint() {
      return 1n
    }
    await expectEvaluationError(run(<ReturnsObject />), "AML cannot render a value of type object")
    await expectEvaluationError(run(<AsyncReturnsBigint />), "AML cannot render a value of type bigint")
  })

  test("a promise resolving to an unrenderable value rejects", async () => {
    await expectEvaluationError(run(Promise.resolve(Symbol.iterator)), "AML cannot render a value of type symbol")
  })

  test("plain objects are never stringified, even with toString", async () => {
    const object = { toString: vi.fn(() => "text"), valueOf: vi.fn(() => 1) }
    await expectEvaluationError(run(object), "AML cannot render a value of type object")
    expect(object.toString).not.toHaveBeenCalled()
    expect(object.valueOf).not.toHaveBeenCalled()
  })
})
