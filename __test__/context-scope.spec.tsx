// Context lexical scope (INVENTORY CTX-1, CTX-2; SPEC §11 "Context obeys lexical scope"):
// shadowing, isolation of siblings, concurrent roots and Parallel branches, inheritance
// through component-local evaluate(), identity capture, and a Provider's transparency
// (no depth, no span, same channel).
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Parallel, System, createContext, evaluate, useContext } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { delay, echoProvider, traceRecorder } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

const Name = createContext<string>("Name")
const Read = () => useContext(Name)
/** Reads the context after `ms`, so concurrent readers interleave. */
async function SlowRead(props: { ms: number }) {
  await delay(props.ms)
  return useContext(Name)
}

describe("shadowing and isolation", () => {
  it("nested Providers shadow only their own subtree", async () => {
    const tree = (
      <Name.Provider value="outer">
        <Read />,
        <Name.Provider value="inner">
          <Read />,
          <Name.Provider value="innermost">
            <Read />
          </Name.Provider>
          ,<Read />
        </Name.Provider>
        ,<Read />
      </Name.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("outer,inner,innermost,inner,outer")
  })

  it("sibling subtrees do not see each other's bindings", async () => {
    const tree = [
      <Name.Provider value="left">
        <SlowRead ms={20} />
      </Name.Provider>,
      "|",
      jsx(() => {
        try {
          return useContext(Name)
        } catch (error: any) {
          return error.message
        }
      }, {}),
      "|",
      <Name.Provider value="right">
        <Read />
      </Name.Provider>,
    ]
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe('left|Context "Name" has no Provider or default value|right')
  })

  it("concurrent root evaluations are isolated, on one runtime or several", async () => {
    const runtime = new AmlRuntime()
    const run = (value: string, ms: number) =>
      runtime.evaluate(
        <Name.Provider value={value}>
          <SlowRead ms={ms} />-<SlowRead ms={ms / 2} />
        </Name.Provider>,
      )
    const results = await Promise.all([run("a", 30), run("b", 10), new AmlRuntime().evaluate(<Read />).catch((e) => e)])
    expect(results.slice(0, 2)).toEqual(["a-a", "b-b"])
    expectError(results[2], EvaluationError, 'Context "Name" has no Provider or default value')
  })

  it("Parallel branches receive isolated bindings, whichever finishes first", async () => {
    const tree = (
      <Name.Provider value="parent">
        <Parallel>
          <Name.Provider value="one">
            <SlowRead ms={30} />
          </Name.Provider>
          <Name.Provider value="two">
            <SlowRead ms={1} />
          </Name.Provider>
          <SlowRead ms={15} />
        </Parallel>
      </Name.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("onetwoparent")
  })
})

describe("component-local evaluate() inherits the calling component's bindings", () => {
  it("before and after an await, while Providers created inside stay local", async () => {
    async function Caller() {
      const first = await evaluate(<Read />)
      await delay(5)
      const shadowed = await evaluate(
        <Name.Provider value="nested">
          <Read />
        </Name.Provider>,
      )
      // The nested tree's Provider did not leak into this component or later evaluations.
      const again = await evaluate(<SlowRead ms={1} />)
      return [first, shadowed, again, useContext(Name)].join(",")
    }
    const tree = (
      <Name.Provider value="outer">
        <Caller />
      </Name.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("outer,nested,outer,outer")
  })

  it("concurrent nested evaluations each keep their own bindings", async () => {
    async function Caller() {
      const parts = await Promise.all(
        ["x", "y", "z"].map((value, index) =>
          evaluate(
            <Name.Provider value={value}>
              <SlowRead ms={30 - index * 10} />
            </Name.Provider>,
          ),
        ),
      )
      return parts.join("")
    }
    await expect(new AmlRuntime().evaluate(<Caller />)).resolves.toBe("xyz")
  })

  it("useContext in the component after its awaits still reads its own occurrence's binding", async () => {
    async function Late() {
      await delay(10)
      return useContext(Name)
    }
    const tree = [
      <Name.Provider value="first">
        <Late />
      </Name.Provider>,
      <Name.Provider value="second">
        <Late />
      </Name.Provider>,
    ]
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("firstsecond")
  })
})

describe("value capture", () => {
  it("keeps the exact object: not cloned, frozen or serialized; later mutation is visible", async () => {
    const session = { counter: 0, db: new Map([["k", "v"]]) }
    const Ctx = createContext<typeof session>("Session")
    const seen: unknown[] = []
    function Use() {
      const value = useContext(Ctx)
      seen.push(value)
      value.counter++
      return `${value.counter}`
    }
    const tree = (
      <Ctx.Provider value={session}>
        <Use />
        <Use />
      </Ctx.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("12")
    expect(seen[0]).toBe(session)
    expect(seen[1]).toBe(session)
    expect(Object.isFrozen(session)).toBe(false)
    expect(session.counter).toBe(2)
  })
})

describe("transparency", () => {
  function chain(depth: number, leaf: unknown): unknown {
    // `depth` component levels: Level → Level → … → leaf.
    let value = leaf
    for (let i = 0; i < depth; i++) {
      const inner = value
      value = jsx(function Level() {
        return inner as any
      }, {})
    }
    return value
  }

  it("Providers add no depth: the maxDepth threshold is the same with and without them", async () => {
    const plain = chain(3, "x")
    let wrapped: unknown = chain(3, <Name.Provider value="v">{<Read />}</Name.Provider>)
    for (let i = 0; i < 5; i++) wrapped = <Name.Provider value={`w${i}`}>{wrapped as any}</Name.Provider>
    // Three Levels plus Read are four component levels in the wrapped tree.
    await expect(new AmlRuntime({ maxDepth: 3 }).evaluate(plain as any)).resolves.toBe("x")
    const tooDeep = (maxDepth: number, tree: unknown) => failureOf(() => new AmlRuntime({ maxDepth }).evaluate(tree as any))
    expectError(await tooDeep(2, plain), EvaluationError, "AML evaluation exceeded maxDepth 2")
    await expect(new AmlRuntime({ maxDepth: 4 }).evaluate(wrapped as any)).resolves.toBe("v")
    expectError(await tooDeep(3, wrapped), EvaluationError, "AML evaluation exceeded maxDepth 3")
  })

  it("a Provider emits no span: descendants are parented to the enclosing span", async () => {
    const { events, sink } = traceRecorder()
    function Outer() {
      return (
        <Name.Provider value="v">
          <Name.Provider value="w">
            <Read />
          </Name.Provider>
        </Name.Provider>
      )
    }
    await expect(new AmlRuntime({ trace: sink }).evaluate(<Outer />)).resolves.toBe("w")
    const starts = events.filter((event) => event.type === "span.start")
    expect(starts.map((event) => [event.kind, event.name])).toEqual([
      ["evaluation", "evaluate"],
      ["component", "Outer"],
      ["component", "Read"],
    ])
    expect(starts[2].parentSpanId).toBe(starts[1].spanId)
    // The value is never traced either.
    expect(JSON.stringify(events)).not.toContain('"w"')
  })

  it("keeps the current Agent channel: prompt text and <System> inside a Provider go to the Agent", async () => {
    const { provider, requests } = echoProvider("p")
    const tree = (
      <Agent provider={provider}>
        before{" "}
        <Name.Provider value="ctx">
          <Read /> <System>sys</System>
        </Name.Provider>{" "}
        after
      </Agent>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("before ctx  after")
    expect(requests[0].prompt).toBe("before ctx  after")
    expect(requests[0].system).toBe("sys")
  })

  it("an inline provider inside a Provider inside an Agent prompt sees no difference", async () => {
    const inline = { name: "p", async run(req: any) { return { text: req.prompt } } }
    const tree = (
      <Agent provider={inline}>
        outer[
        <Name.Provider value="v">
          <Agent provider={inline}>
            inner <Read />
          </Agent>
        </Name.Provider>
        ]
      </Agent>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("outer[inner v]")
  })
})
