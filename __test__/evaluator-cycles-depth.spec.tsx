// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — cycles, maxDepth and stack safety.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { Agent, Fragment, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { AsyncLevel, expectEvaluationError, Level, Pass, run } from "./support/evaluator.js"

describe("cycles", () => {
  test("an array containing itself", async () => {
    const cyclic: unknown[] = ["a"]
    cyclic.push(cyclic)
    await expectEvaluationError(run(cyclic), "AML arrays cannot contain cycles")
  })

  test("an array cycle through a deeper array", async () => {
    const outer: unknown[] = []
    const inner: unknown[] = ["x", outer]
    outer.push(inner)
    await expectEvaluationError(run(["start", outer]), "AML arrays cannot contain cycles")
  })

  test("a node whose component returns the same node", async () => {
    let node: unknown
    const component = vi.fn(() => node)
    node = jsx(component as never, {})
    await expectEvaluationError(run(node), "AML nodes cannot contain cycles")
    expect(component).toHaveBeenCalledTimes(1)
  })

  test("a node reached again through its own children", async () => {
    let node: unknown
    function Loop() {
      return ["text", <Pass>{node}</Pass>]
    }
    node = <Loop />
    await expectEvaluationError(run(node), "AML nodes cannot contain cycles")
  })

  test("a cycle across a promise", async () => {
    let node: unknown
    async function Later() {
      await sleep(1)
      return node
    }
    node = <Later />
    await expectEvaluationError(run(node), "AML nodes cannot contain cycles")

    const array: unknown[] = []
    array.push(sleep(1).then(() => array))
    await expectEvaluationError(run(array), "AML arrays cannot contain cycles")
  })

  test("a cycle across a nested component-local evaluate()", async () => {
    let node: unknown
    async function Recursive() {
      return await evaluate(node as never)
    }
    node = <Recursive />
    await expectEvaluationError(run(node), "AML nodes cannot contain cycles")
  })

  test("an array cycle across a nested component-local evaluate()", async () => {
    const array: unknown[] = []
    async function Inner() {
      return await evaluate(array as never)
    }
    array.push("x", <Inner />)
    await expectEvaluationError(run(array), "AML arrays cannot contain cycles")
  })

  test("a nested evaluate() of a sibling (not an ancestor) is not a cycle", async () => {
    const sibling = <Pass>s</Pass>
    async function UsesSibling() {
      return ["<", await evaluate(sibling), ">"]
    }
    expect(await run([sibling, <UsesSibling />])).toBe("s<s>")
  })

  test("recursion with fresh nodes is not a cycle", async () => {
    expect(await run(<Level n={5} />)).toBe("leaf")
  })
})

describe("maxDepth", () => {
  test("default 16: 16 nested nodes succeed, 17 fail", async () => {
    expect(await run(<Level n={16} />)).toBe("leaf")
    await expectEvaluationError(run(<Level n={17} />), "AML evaluation exceeded maxDepth 16")
  })

  test("the depth count is the same for async components", async () => {
    expect(await run(<AsyncLevel n={16} />)).toBe("leaf")
    await expectEvaluationError(run(<AsyncLevel n={17} />), "AML evaluation exceeded maxDepth 16")
  })

  test("a custom maxDepth", async () => {
    expect(await run(<Level n={3} />, { maxDepth: 3 })).toBe("leaf")
    await expectEvaluationError(run(<Level n={4} />, { maxDepth: 3 }), "AML evaluation exceeded maxDepth 3")
    await expectEvaluationError(run(<Level n={2} />, { maxDepth: 1 }), "AML evaluation exceeded maxDepth 1")
    expect(await run(<Level n={40} />, { maxDepth: 40 })).toBe("leaf")
  })

  test("maxDepth 0 is unlimited", async () => {
    expect(await run(<Level n={200} />, { maxDepth: 0 })).toBe("leaf")
  })

  test("a component whose children exceed the limit fails only when they are reached", async () => {
    const after = vi.fn(() => "after")
    const After = after as unknown as () => string
    await expectEvaluationError(
      run(["text", <Level n={3} />, <After />], { maxDepth: 2 }),
      "AML evaluation exceeded maxDepth 2",
    )
    expect(after).not.toHaveBeenCalled()
  })

  test("arrays and promises add no depth", async () => {
    function Deep() {
      return [[[Promise.resolve([[sleep(1).then(() => [[["x"]]])]])]]]
    }
    expect(await run([[[[<Deep />]]]], { maxDepth: 1 })).toBe("x")
    function DeepNode() {
      return [[Promise.resolve([<Pass>y</Pass>])]]
    }
    await expectEvaluationError(run([[<DeepNode />]], { maxDepth: 1 }), "AML evaluation exceeded maxDepth 1")
    expect(await run([[<DeepNode />]], { maxDepth: 2 })).toBe("y")
  })

  test("siblings do not accumulate depth", async () => {
    expect(await run([<Level n={2} />, <Level n={2} />, <Level n={2} />], { maxDepth: 2 })).toBe("leafleafleaf")
  })

  test("primitive nodes count toward depth", async () => {
    await expectEvaluationError(run(<Pass>{<Agent>x</Agent>}</Pass>, { maxDepth: 1 }), "AML evaluation exceeded maxDepth 1")
  })

  test("a nested evaluate() continues from the calling component's depth", async () => {
    async function Outer() {
      return await evaluate(<Level n={2} />)
    }
    // Outer is depth 1, the nested Level chain is depth 2 and 3.
    expect(await run(<Outer />, { maxDepth: 3 })).toBe("leaf")
    await expectEvaluationError(run(<Outer />, { maxDepth: 2 }), "AML evaluation exceeded maxDepth 2")
  })
})

describe("stack safety", () => {
  test("a 100,000-element array", async () => {
    const values = Array.from({ length: 100_000 }, (_, index) => index % 10)
    const text = await run(values)
    expect(text.length).toBe(100_000)
    expect(text).toBe(values.join(""))
  })

  test("100,000 sibling component nodes", async () => {
    const values = Array.from({ length: 100_000 }, () => <Pass>a</Pass>)
    expect(await run(values)).toBe("a".repeat(100_000))
  })

  test("10,000-deep component nesting with maxDepth 0", async () => {
    expect(await run(<Level n={10_000} />, { maxDepth: 0 })).toBe("leaf")
  })

  test("10,000-deep async component nesting with maxDepth 0", async () => {
    expect(await run(<AsyncLevel n={10_000} />, { maxDepth: 0 })).toBe("leaf")
  })

  test("10,000-deep array nesting", async () => {
    let value: unknown = "x"
    for (let index = 0; index < 10_000; index++) value = index % 2 === 0 ? [value] : ["", value, null]
    expect(await run(value)).toBe("x")
  })

  test("10,000-deep Fragment nesting with maxDepth 0", async () => {
    let value: unknown = "end"
    for (let index = 0; index < 10_000; index++) value = jsx(Fragment, { children: value })
    expect(await run(value, { maxDepth: 0 })).toBe("end")
  })
})
