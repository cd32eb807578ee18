// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — normalisation, thenables, component
// invocation, lazy ordered siblings, cycles, depth, stack safety and error identity.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Fragment, evaluate } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

type Props = { readonly children?: unknown }

const run = (value: unknown, options?: Record<string, unknown>): Promise<string> =>
  new AmlRuntime(options as never).evaluate(value as never)

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the evaluation to reject")
    },
    (error: unknown) => error,
  )
}

async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<EvaluationError> {
  await expect(promise).rejects.toThrow(message)
  const error = await rejection(promise)
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error).toBeInstanceOf(Error)
  expect((error as Error).name).toBe("EvaluationError")
  expect((error as Error).message).toBe(message)
  return error as EvaluationError
}

function Pass(props: Props) {
  return props.children
}

async function AsyncPass(props: Props) {
  await sleep(1)
  return props.children
}

/** A chain of `n` nested component nodes ending in "leaf". */
function Level(props: { readonly n: number }): unknown {
  return props.n > 1 ? <Level n={props.n - 1} /> : "leaf"
}

async function AsyncLevel(props: { readonly n: number }): Promise<unknown> {
  await Promise.resolve()
  return props.n > 1 ? <AsyncLevel n={props.n - 1} /> : "leaf"
}

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

describe("thenables", () => {
  test("native promises are awaited, including nested ones", async () => {
    expect(await run(Promise.resolve("a"))).toBe("a")
    expect(await run([Promise.resolve("a"), sleep(5).then(() => "b"), "c"])).toBe("abc")
    expect(await run(Promise.resolve([Promise.resolve(1), Promise.resolve([Promise.resolve(2)])]))).toBe("12")
  })

  test("a promise resolving to a node evaluates the node", async () => {
    const component = vi.fn(() => "from node")
    const Component = component as unknown as () => string
    expect(await run(Promise.resolve(<Component />))).toBe("from node")
    expect(component).toHaveBeenCalledTimes(1)
  })

  function customThenable(value: unknown) {
    const log = { called: 0, calledSynchronously: undefined as boolean | undefined, reads: 0 }
    const thenable = {}
    Object.defineProperty(thenable, "then", {
      get() {
        log.reads++
        let synchronous = true
        queueMicrotask(() => {
          synchronous = false
        })
        return (resolve: (value: unknown) => void) => {
          log.called++
          log.calledSynchronously = synchronous
          resolve(value)
        }
      },
    })
    return { log, thenable }
  }

  test("a custom thenable's then getter is read exactly once and called in a later microtask", async () => {
    const { log, thenable } = customThenable("resolved")
    expect(await run(thenable)).toBe("resolved")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable inside an array is read once and called later", async () => {
    const { log, thenable } = customThenable(["x", 1])
    expect(await run(["<", thenable, ">"])).toBe("<x1>")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable returned by a sync component is read once and called later", async () => {
    const { log, thenable } = customThenable("via component")
    function ReturnsThenable() {
      return thenable
    }
    expect(await run(<ReturnsThenable />)).toBe("via component")
    expect(log.reads).toBe(1)
    expect(log.called).toBe(1)
    expect(log.calledSynchronously).toBe(false)
  })

  test("a custom thenable resolving to a node evaluates the node", async () => {
    const component = vi.fn(() => "node text")
    const Component = component as unknown as () => string
    const { log, thenable } = customThenable(<Component />)
    expect(await run(["[", thenable, "]"])).toBe("[node text]")
    expect(component).toHaveBeenCalledTimes(1)
    expect(log.reads).toBe(1)
  })

  test("a thenable resolving to another thenable is followed", async () => {
    const inner = customThenable("inner")
    const outer = customThenable(inner.thenable)
    expect(await run(outer.thenable)).toBe("inner")
    expect(outer.log.reads).toBe(1)
    expect(inner.log.reads).toBe(1)
  })

  test("a class instance with a prototype then method is a thenable", async () => {
    class Deferred {
      then(resolve: (value: unknown) => void) {
        resolve(["class ", "thenable"])
      }
    }
    expect(await run(new Deferred())).toBe("class thenable")
  })

  test("only the first settlement of a custom thenable counts", async () => {
    const thenable = {
      then(resolve: (value: unknown) => void, reject: (error: unknown) => void) {
        resolve("first")
        resolve("second")
        reject(new Error("ignored"))
      },
    }
    expect(await run(thenable)).toBe("first")
  })

  test("a thenable rejection propagates its reason by identity", async () => {
    const reason = new Error("thenable failed")
    const thenable = {
      then(_resolve: unknown, reject: (error: unknown) => void) {
        reject(reason)
      },
    }
    expect(await rejection(run(["a", thenable]))).toBe(reason)
  })

  test("a then method that throws rejects with that error", async () => {
    const thrown = new Error("then threw")
    const thenable = {
      then() {
        throw thrown
      },
    }
    expect(await rejection(run(thenable))).toBe(thrown)
  })

  test("a throwing then getter rejects with that error", async () => {
    const thrown = new Error("getter threw")
    const thenable = Object.defineProperty({}, "then", {
      get() {
        throw thrown
      },
    })
    expect(await rejection(run(["a", thenable]))).toBe(thrown)
  })

  test("an object whose then is not a function is not a thenable", async () => {
    await expectEvaluationError(run({ then: 42 }), "AML cannot render a value of type object")
    await expectEvaluationError(run({ then: "x" }), "AML cannot render a value of type object")
  })

  test("a component returning an object with a non-callable then getter reads it once", async () => {
    let reads = 0
    function Weird() {
      return Object.defineProperty({}, "then", {
        get() {
          reads++
          return "not callable"
        },
      })
    }
    await expectEvaluationError(run(<Weird />), "AML cannot render a value of type object")
    expect(reads).toBe(1)
  })
})

describe("function components", () => {
  test("sync components receive their frozen props including children", async () => {
    let received: Record<string, unknown> | undefined
    function Greeting(props: { readonly name: string; readonly children?: unknown }) {
      received = props
      return ["Hello ", props.name, props.children]
    }
    expect(await run(<Greeting name="Ada">!</Greeting>)).toBe("Hello Ada!")
    expect(received).toEqual({ children: "!", name: "Ada" })
    expect(Object.isFrozen(received)).toBe(true)
  })

  test("async components are awaited", async () => {
    async function Later(props: { readonly ms: number; readonly text: string }) {
      await sleep(props.ms)
      return props.text
    }
    expect(await run(<Later ms={5} text="done" />)).toBe("done")
  })

  test("components may return nodes, arrays, promises and nothing", async () => {
    function Inner() {
      return "inner"
    }
    function ReturnsNode() {
      return <Inner />
    }
    function ReturnsArray() {
      return ["[", <Inner />, "]"]
    }
    function ReturnsPromise() {
      return Promise.resolve(<Inner />)
    }
    function ReturnsNothing() {
      return undefined
    }
    async function AsyncReturnsNull() {
      return null
    }
    expect(
      await run([<ReturnsNode />, <ReturnsArray />, <ReturnsPromise />, <ReturnsNothing />, <AsyncReturnsNull />]),
    ).toBe("inner[inner]inner")
  })

  test("a component is invoked once per evaluated occurrence (no memoisation)", async () => {
    const component = vi.fn(() => "x")
    const Component = component as unknown as () => string
    const node = <Component />
    expect(await run([node, node])).toBe("xx")
    expect(component).toHaveBeenCalledTimes(2)
    expect(await run([node, <Pass>{node}</Pass>, [node]])).toBe("xxx")
    expect(component).toHaveBeenCalledTimes(5)
  })

  test("the same node evaluated by two runtimes is invoked each time", async () => {
    const component = vi.fn(async () => "y")
    const Component = component as unknown as () => Promise<string>
    const node = <Component />
    const [a, b] = await Promise.all([run(node), run(node)])
    expect(a + b).toBe("yy")
    expect(component).toHaveBeenCalledTimes(2)
  })

  test("a function component is called with the node's props as its only argument", async () => {
    const component = vi.fn((..._args: unknown[]) => "ok")
    const node = jsx(component as never, { a: 1 })
    expect(await run(node)).toBe("ok")
    expect(component).toHaveBeenCalledTimes(1)
    expect(component.mock.calls[0]).toHaveLength(1)
    expect(component.mock.calls[0]![0]).toBe(node.props)
  })
})

describe("ordering", () => {
  test("siblings are read lazily: element 1 is read only after element 0's subtree finished", async () => {
    const log: string[] = []
    async function Slow() {
      log.push("slow start")
      await sleep(20)
      log.push("slow end")
      return <Pass>{"slow"}</Pass>
    }
    const values: unknown[] = [<Slow />, "fast"]
    const lazy: unknown[] = []
    for (const index of [0, 1]) {
      Object.defineProperty(lazy, index, {
        enumerable: true,
        get() {
          log.push(`read ${index}`)
          return values[index]
        },
      })
    }
    expect(lazy.length).toBe(2)
    expect(await run(lazy)).toBe("slowfast")
    expect(log).toEqual(["read 0", "slow start", "slow end", "read 1"])
  })

  test("each element is read exactly once", async () => {
    const reads = [0, 0, 0]
    const lazy: unknown[] = []
    for (const index of [0, 1, 2]) {
      Object.defineProperty(lazy, index, {
        get() {
          reads[index]!++
          return String(index)
        },
      })
    }
    expect(await run(lazy)).toBe("012")
    expect(reads).toEqual([1, 1, 1])
  })

  test("output follows authored order whatever the async timings, with no implicit concurrency", async () => {
    const log: string[] = []
    function Delay(props: { readonly ms: number; readonly label: string; readonly children?: unknown }) {
      log.push(`start ${props.label}`)
      return sleep(props.ms).then(() => {
        log.push(`end ${props.label}`)
        return props.children
      })
    }
    const tree = (
      <>
        <Delay ms={30} label="a">
          a
        </Delay>
        <Delay ms={0} label="b">
          b<Delay ms={15} label="b2">
            2
          </Delay>
        </Delay>
        c
        {sleep(10).then(() => "d")}
        <Delay ms={1} label="e">
          e
        </Delay>
      </>
    )
    expect(await run(tree)).toBe("ab2cde")
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start b2", "end b2", "start e", "end e"])
  })

  test("a parent's text is assembled after its children resolve (post-order)", async () => {
    const log: string[] = []
    function Child(props: { readonly label: string }) {
      log.push(props.label)
      return props.label
    }
    async function Parent(props: Props) {
      log.push("parent")
      return ["(", props.children, ")"]
    }
    expect(
      await run(
        <Parent>
          <Child label="x" />
          <Child label="y" />
        </Parent>,
      ),
    ).toBe("(xy)")
    expect(log).toEqual(["parent", "x", "y"])
  })
})

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

describe("errors", () => {
  test("EvaluationError is an Error subclass named EvaluationError that keeps cause", () => {
    const cause = new Error("root cause")
    const error = new EvaluationError("message", { cause })
    expect(error).toBeInstanceOf(Error)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.name).toBe("EvaluationError")
    expect(error.message).toBe("message")
    expect(error.cause).toBe(cause)
    expect(new EvaluationError("no cause")).not.toHaveProperty("cause")
  })

  test("a sync component's error propagates by identity", async () => {
    const thrown = new Error("component failed")
    function Fails() {
      throw thrown
    }
    const error = await rejection(run(["a", <Pass>{<Fails />}</Pass>]))
    expect(error).toBe(thrown)
    expect(error).not.toBeInstanceOf(EvaluationError)
  })

  test("an async component's rejection propagates by identity with its cause", async () => {
    const cause = new Error("inner")
    const thrown = new TypeError("async failed", { cause })
    async function Fails() {
      await sleep(1)
      throw thrown
    }
    const error = await rejection(run(<AsyncPass>{<Fails />}</AsyncPass>))
    expect(error).toBe(thrown)
    expect((error as Error).cause).toBe(cause)
  })

  test("non-Error thrown values propagate as is", async () => {
    const thrown = { code: 7 }
    function ThrowsObject() {
      throw thrown
    }
    function ThrowsString() {
      throw "plain string"
    }
    expect(await rejection(run(<ThrowsObject />))).toBe(thrown)
    expect(await rejection(run(<ThrowsString />))).toBe("plain string")
  })

  test("a rejected promise value propagates its reason by identity", async () => {
    const reason = new RangeError("promise failed")
    expect(await rejection(run(["a", Promise.reject(reason)]))).toBe(reason)
  })

  test("a failure stops evaluation: later siblings are never read or invoked", async () => {
    const later = vi.fn(() => "later")
    const Later = later as unknown as () => string
    function Fails() {
      throw new Error("stop")
    }
    await expect(run([<Fails />, <Later />])).rejects.toThrow("stop")
    expect(later).not.toHaveBeenCalled()
  })

  test("an error from a nested evaluate() propagates by identity through the component", async () => {
    const thrown = new Error("nested failed")
    function Fails() {
      throw thrown
    }
    async function Outer() {
      return await evaluate(<Fails />)
    }
    expect(await rejection(run(<Outer />))).toBe(thrown)
  })

  test("evaluate() outside a component throws EvaluationError synchronously", () => {
    let caught: unknown
    try {
      evaluate("x")
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(EvaluationError)
    expect((caught as Error).message).toBe("evaluate() is only available while an AML component is active")
  })

  test("a runtime can evaluate again after a failed evaluation", async () => {
    const runtime = new AmlRuntime()
    const cyclic: unknown[] = []
    cyclic.push(cyclic)
    await expect(runtime.evaluate(cyclic as never)).rejects.toThrow("AML arrays cannot contain cycles")
    expect(await runtime.evaluate(<Level n={3} />)).toBe("leaf")
  })
})

describe("providers", () => {
  test("a text-only tree needs no provider", async () => {
    const runtime = new AmlRuntime()
    expect(
      await runtime.evaluate(
        <>
          <Pass>Plain </Pass>
          <AsyncPass>text {1}</AsyncPass>
        </>,
      ),
    ).toBe("Plain text 1")
  })
})
