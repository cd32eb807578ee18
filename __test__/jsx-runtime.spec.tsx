// JSX-1 / JSX-2 / RT-4 (node brand, primitive markers): the automatic JSX runtime entries,
// node construction, the copy-stable brand, primitive functions and Fragment.
import { describe, expect, test, vi } from "vitest"

import * as root from "@aml-jsx/sdk"
import {
  Agent,
  AmlRuntime,
  EvaluationError,
  File,
  FollowUp,
  Fragment,
  Include,
  Loop,
  Mcp,
  Parallel,
  Sandbox,
  Script,
  Skill,
  System,
  Tool,
  Workspace,
} from "@aml-jsx/sdk"
import * as devRuntime from "@aml-jsx/sdk/jsx-dev-runtime"
import { Fragment as DevFragment, jsxDEV } from "@aml-jsx/sdk/jsx-dev-runtime"
import * as jsxRuntime from "@aml-jsx/sdk/jsx-runtime"
import { Fragment as RuntimeFragment, jsx, jsxs } from "@aml-jsx/sdk/jsx-runtime"

const NODE = Symbol.for("@aml-jsx/sdk/node")
const PRIMITIVE_KIND = Symbol.for("@aml-jsx/sdk/primitive-kind")
const UNKNOWN = "AML does not support intrinsic or unknown JSX element types"

const run = (value: unknown, options?: Record<string, unknown>): Promise<string> =>
  new AmlRuntime(options as never).evaluate(value as never)

async function expectEvaluationError(promise: Promise<unknown>, message: string): Promise<EvaluationError> {
  await expect(promise).rejects.toThrow(message)
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error).toBeInstanceOf(Error)
  expect((error as Error).name).toBe("EvaluationError")
  expect((error as Error).message).toBe(message)
  return error as EvaluationError
}

function Text(props: { readonly value: string }) {
  return props.value
}

describe("entry points", () => {
  test("jsx-runtime exports jsx, jsxs and Fragment; jsxs is jsx", () => {
    expect(typeof jsx).toBe("function")
    expect(jsxs).toBe(jsx)
    expect(Object.keys(jsxRuntime).sort()).toEqual(expect.arrayContaining(["Fragment", "jsx", "jsxs"]))
  })

  test("jsx-dev-runtime exports jsxDEV and Fragment", () => {
    expect(typeof jsxDEV).toBe("function")
    expect(Object.keys(devRuntime)).toEqual(expect.arrayContaining(["Fragment", "jsxDEV"]))
  })

  test("Fragment is the same function from the root and both JSX entries", () => {
    expect(RuntimeFragment).toBe(Fragment)
    expect(DevFragment).toBe(Fragment)
  })

  test("the node class is not a root value export", () => {
    expect(Object.keys(root)).not.toContain("AmlNode")
    expect((root as Record<string, unknown>).AmlNode).toBeUndefined()
  })
})

describe("node construction", () => {
  test("jsx() never calls the component", () => {
    const component = vi.fn(() => "x")
    const node = jsx(component, { a: 1 })
    jsxs(component, { children: ["a", "b"] })
    jsxDEV(component, {}, undefined, false, { fileName: "f.tsx", lineNumber: 1 }, undefined)
    expect(node.type).toBe(component)
    expect(component).not.toHaveBeenCalled()
  })

  test("authored JSX syntax never calls the component, even when nested", () => {
    const outer = vi.fn((props: { children?: unknown }) => props.children)
    const inner = vi.fn(() => "inner")
    const Outer = outer as unknown as (props: { children?: unknown }) => unknown
    const Inner = inner as unknown as () => string
    const tree = (
      <Outer>
        <Inner />
        <Inner />
      </Outer>
    )
    expect(tree.type).toBe(Outer)
    expect(outer).not.toHaveBeenCalled()
    expect(inner).not.toHaveBeenCalled()
  })

  test("props are shallow-copied: later mutation of the input does not reach the node", () => {
    const nested = { deep: 1 }
    const input: Record<string, unknown> = { a: 1, nested }
    const node = jsx(Text, input)
    expect(node.props).not.toBe(input)
    expect(node.props).toEqual({ a: 1, nested })
    input.a = 2
    input.added = true
    delete input.nested
    expect(node.props).toEqual({ a: 1, nested })
    // Shallow: nested values keep their identity and are not frozen.
    expect(node.props.nested).toBe(nested)
    expect(Object.isFrozen(nested)).toBe(false)
    // The caller's object is not frozen either.
    expect(Object.isFrozen(input)).toBe(false)
  })

  test("props are frozen", () => {
    const node = jsx(Text, { value: "a" })
    expect(Object.isFrozen(node.props)).toBe(true)
    expect(() => {
      ;(node.props as { value: string }).value = "b"
    }).toThrow(TypeError)
    expect(node.props.value).toBe("a")
  })

  test("null props become an empty frozen object", () => {
    const node = jsx(Text as never, null)
    expect(node.props).toEqual({})
    expect(Object.isFrozen(node.props)).toBe(true)
  })

  test("the node itself is frozen", () => {
    const node = jsx(Text, { value: "a" })
    expect(Object.isFrozen(node)).toBe(true)
    expect(() => {
      ;(node as { type: unknown }).type = Fragment
    }).toThrow(TypeError)
    expect(() => {
      ;(node as unknown as Record<string, unknown>).extra = 1
    }).toThrow(TypeError)
    expect(node.type).toBe(Text)
  })

  test("keys are ignored and never appear in props", () => {
    const node = jsx(Text, { value: "a" }, "the-key")
    expect(node.props).toEqual({ value: "a" })
    expect("key" in node.props).toBe(false)
    const keyed = <Text key="k" value="b" />
    expect(keyed.props).toEqual({ value: "b" })
  })

  test("jsxDEV forwards to jsx and ignores key, static flag and source metadata", () => {
    const source = { columnNumber: 3, fileName: "x.tsx", lineNumber: 7 }
    const self = {}
    const node = jsxDEV(Text, { value: "a" }, "k", true, source, self)
    expect(node.type).toBe(Text)
    expect(node.props).toEqual({ value: "a" })
    expect(Object.isFrozen(node)).toBe(true)
    expect(Object.isFrozen(node.props)).toBe(true)
    expect(node.props).not.toHaveProperty("__source")
    expect(node.props).not.toHaveProperty("__self")
    expect((node as unknown as { $$typeof: unknown }).$$typeof).toBe(NODE)
  })

  test("children passed by jsxs keep their array and order", async () => {
    const children = ["a", 1, "b"]
    const node = jsxs(Fragment, { children })
    expect(node.props.children).toBe(children)
    expect(await run(node)).toBe("a1b")
  })
})

describe("copy-stable node brand", () => {
  test("a node has a non-enumerable, own $$typeof === Symbol.for('@aml-jsx/sdk/node')", () => {
    const node = jsx(Text, { value: "a" })
    const descriptor = Object.getOwnPropertyDescriptor(node, "$$typeof")
    expect(descriptor).toBeDefined()
    expect(descriptor!.value).toBe(NODE)
    expect(descriptor!.enumerable).toBe(false)
    expect(Object.keys(node)).not.toContain("$$typeof")
    expect(JSON.stringify(node)).not.toContain("$$typeof")
    expect({ ...node }).not.toHaveProperty("$$typeof")
  })

  test("JSX syntax produces the same brand", () => {
    const node = <Text value="a" />
    expect(Object.getOwnPropertyDescriptor(node, "$$typeof")?.value).toBe(NODE)
  })

  test("a plain { type, props } object is not evaluated as a node", async () => {
    const component = vi.fn(() => "called")
    await expectEvaluationError(run({ type: component, props: {} }), "AML cannot render a value of type object")
    await expectEvaluationError(
      run(["a", { type: component, props: { children: "x" } }]),
      "AML cannot render a value of type object",
    )
    expect(component).not.toHaveBeenCalled()
  })

  test("a spread copy of a node loses the brand and is rejected", async () => {
    const component = vi.fn(() => "called")
    const copy = { ...jsx(component, {}) }
    await expectEvaluationError(run(copy), "AML cannot render a value of type object")
    expect(component).not.toHaveBeenCalled()
  })

  test("an enumerable string $$typeof is not the brand", async () => {
    const component = vi.fn(() => "called")
    await expectEvaluationError(
      run({ $$typeof: "@aml-jsx/sdk/node", props: {}, type: component }),
      "AML cannot render a value of type object",
    )
    expect(component).not.toHaveBeenCalled()
  })

  test("a node built by another SDK copy (same Symbol.for brand) is evaluated", async () => {
    const component = vi.fn((props: { readonly word: string }) => `hello ${props.word}`)
    const foreign = Object.freeze(
      Object.defineProperty({ props: Object.freeze({ word: "copy" }), type: component }, "$$typeof", {
        enumerable: false,
        value: NODE,
      }),
    )
    expect(await run(["<", foreign, ">"])).toBe("<hello copy>")
    expect(component).toHaveBeenCalledTimes(1)
  })
})

describe("primitive functions", () => {
  const primitives: ReadonlyArray<readonly [string, unknown, string]> = [
    ["Agent", Agent, "agent"],
    ["System", System, "system"],
    ["Tool", Tool, "tool"],
    ["Mcp", Mcp, "mcp"],
    ["Skill", Skill, "skill"],
    ["File", File, "file"],
    ["FollowUp", FollowUp, "follow-up"],
    ["Loop", Loop, "loop"],
    ["Sandbox", Sandbox, "sandbox"],
    ["Script", Script, "script"],
    ["Workspace", Workspace, "workspace"],
    ["Include", Include, "include"],
    ["Parallel", Parallel, "parallel"],
  ]

  test.each(primitives)("%s carries a non-enumerable primitive-kind marker", (_label, primitive, kind) => {
    expect(typeof primitive).toBe("function")
    const descriptor = Object.getOwnPropertyDescriptor(primitive, PRIMITIVE_KIND)
    expect(descriptor).toBeDefined()
    expect(descriptor!.value).toBe(kind)
    expect(descriptor!.enumerable).toBe(false)
    expect(Object.keys(primitive as object)).toEqual([])
  })

  test.each(primitives)("calling %s directly throws a plain Error", (label, primitive) => {
    const call = primitive as (props?: unknown) => unknown
    let caught: unknown
    try {
      call({ children: "x" })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(Error)
    expect((caught as Error).constructor).toBe(Error)
    expect(caught).not.toBeInstanceOf(EvaluationError)
    expect((caught as Error).message).toBe(`<${label}> can only be evaluated by AmlRuntime`)
    expect(() => call()).toThrow(`<${label}> can only be evaluated by AmlRuntime`)
  })

  test("every primitive kind is distinct", () => {
    const kinds = primitives.map(([, primitive]) => (primitive as Record<symbol, unknown>)[PRIMITIVE_KIND])
    expect(new Set(kinds).size).toBe(primitives.length)
  })

  test("building a primitive node does not call the primitive", () => {
    expect(() => <Agent>hello</Agent>).not.toThrow()
    expect(() => jsx(System, { children: "x" })).not.toThrow()
  })

  test("Fragment carries no primitive marker", () => {
    expect((Fragment as unknown as Record<symbol, unknown>)[PRIMITIVE_KIND]).toBeUndefined()
    expect(Object.getOwnPropertySymbols(Fragment)).not.toContain(PRIMITIVE_KIND)
  })
})

describe("intrinsic and unknown element types", () => {
  test("jsx('div', {}) constructs but rejects when evaluated", async () => {
    const node = jsx("div" as never, {})
    expect(node.type).toBe("div")
    await expectEvaluationError(run(node), UNKNOWN)
  })

  test("an intrinsic returned by a component rejects", async () => {
    function Wrapper() {
      return ["before", jsx("span" as never, { children: "x" })]
    }
    await expectEvaluationError(run(<Wrapper />), UNKNOWN)
  })

  test("an upper-case string type is still an intrinsic", async () => {
    await expectEvaluationError(run(jsx("Agent" as never, { children: "x" })), UNKNOWN)
  })

  test.each([
    ["a number", 42],
    ["null", null],
    ["undefined", undefined],
    ["a plain object", {}],
    ["a symbol", Symbol("type")],
    ["a node", jsx(Text, { value: "x" })],
  ])("a non-function type (%s) rejects", async (_label, type) => {
    await expectEvaluationError(run(jsx(type as never, {})), UNKNOWN)
  })

  test("text before an unknown element does not leak: the whole evaluation rejects", async () => {
    const later = vi.fn(() => "later")
    const Later = later as unknown as () => string
    await expectEvaluationError(run(["text", jsx("div" as never, {}), <Later />]), UNKNOWN)
    expect(later).not.toHaveBeenCalled()
  })
})

describe("Fragment", () => {
  test("Fragment({ children }) returns its children as is", () => {
    const children = ["a", "b"]
    expect(Fragment({ children })).toBe(children)
    expect(Fragment({ children: "x" })).toBe("x")
    expect(Fragment({})).toBeUndefined()
  })

  test("<>…</> concatenates its children", async () => {
    expect(
      await run(
        <>
          a{1}
          <Text value="b" />
          {null}
          {false}
          {["c", ["d"]]}
        </>,
      ),
    ).toBe("a1bcd")
  })

  test("an empty fragment renders nothing", async () => {
    expect(await run(<></>)).toBe("")
    expect(await run(jsx(Fragment, null))).toBe("")
  })

  test("Fragment from jsx-dev-runtime evaluates the same", async () => {
    expect(await run(jsxDEV(DevFragment, { children: ["x", jsxDEV(Text, { value: "y" })] }))).toBe("xy")
  })

  test("Fragment adds one depth level", async () => {
    // maxDepth 1: a fragment of text is one node deep.
    expect(await run(<>text</>, { maxDepth: 1 })).toBe("text")
    expect(await run(<Text value="x" />, { maxDepth: 1 })).toBe("x")
    await expectEvaluationError(
      run(
        <>
          <Text value="x" />
        </>,
        { maxDepth: 1 },
      ),
      "AML evaluation exceeded maxDepth 1",
    )
    expect(
      await run(
        <>
          <Text value="x" />
        </>,
        { maxDepth: 2 },
      ),
    ).toBe("x")
    await expectEvaluationError(
      run(
        <>
          <>
            <Text value="x" />
          </>
        </>,
        { maxDepth: 2 },
      ),
      "AML evaluation exceeded maxDepth 2",
    )
  })

  test("sibling fragments do not accumulate depth", async () => {
    const tree = (
      <>
        <>a</>
        <>b</>
        <>c</>
      </>
    )
    expect(await run(tree, { maxDepth: 2 })).toBe("abc")
    await expectEvaluationError(run(tree, { maxDepth: 1 }), "AML evaluation exceeded maxDepth 1")
  })

  test("Fragment is an ordinary component: it emits a component span named Fragment", async () => {
    const events: Array<{ type: string; kind?: string; name: string }> = []
    const runtime = new AmlRuntime({ trace: (event: never) => events.push(event) })
    expect(await runtime.evaluate(<>x</>)).toBe("x")
    const starts = events.filter((event) => event.type === "span.start" && event.kind === "component")
    expect(starts.map((event) => event.name)).toEqual(["Fragment"])
  })

  test("a user component may call Fragment like any other function", async () => {
    function Group(props: { children?: unknown }) {
      return Fragment(props as never)
    }
    expect(
      await run(
        <Group>
          a<Text value="b" />
        </Group>,
      ),
    ).toBe("ab")
  })
})
