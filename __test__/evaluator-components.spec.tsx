// JSX-3 / RT-3: the value model of AmlRuntime.evaluate — component invocation, lazy ordered
// siblings and text-only trees without a provider.
import { setTimeout as sleep } from "node:timers/promises"

import { describe, expect, test, vi } from "vitest"

import { AmlRuntime } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { AsyncPass, Pass, type Props, run } from "./support/evaluator.js"

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
