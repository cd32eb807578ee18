// Context (INVENTORY CTX-1, CTX-2; SPEC §11): createContext() validation, Provider props,
// useContext() and every documented error with its class and exact text. Lexical scoping is
// in context-scope.spec.tsx; cross-copy and the documented examples in context-realm.spec.tsx.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Tool, createContext, defineTool, evaluate, useContext } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"
import { z } from "zod"

import { delay, deferred } from "./support/async.js"
import { expectError, failureOf } from "./support/schemas.js"

const ONLY_ACTIVE = "useContext() is only available while an AML component is active"
const NOT_A_CONTEXT = "useContext() requires a Context returned by createContext()"
const BAD_NAME = "Context name must be a non-empty normalized string"

describe("createContext (CTX-1)", () => {
  it("returns a frozen { name, Provider } whose Provider is a marked primitive", () => {
    const Theme = createContext<string>("Theme")
    expect(Object.isFrozen(Theme)).toBe(true)
    expect(Object.keys(Theme)).toEqual(["name", "Provider"])
    expect(Theme.name).toBe("Theme")
    expect(typeof Theme.Provider).toBe("function")
    expect(Theme.Provider.name).toBe("Theme.Provider")
    // Recognised by the shared marker, not by module identity (RT-4); the marker is hidden.
    expect((Theme.Provider as any)[Symbol.for("@aml-jsx/sdk/primitive-kind")]).toBe("context")
    expect(Object.keys(Theme.Provider)).toEqual([])
    expect(() => Theme.Provider({ value: "x" })).toThrow("<Theme.Provider> can only be evaluated by AmlRuntime")
  })

  it.each([[""], [" Theme"], ["Theme\n"], ["\t"], [42], [undefined], [null], [Symbol("x")]])(
    "rejects the name %s with a TypeError",
    async (name) => {
      expectError(await failureOf(() => createContext(name as any)), TypeError, BAD_NAME)
    },
  )

  it("rejects bad names synchronously (a TypeError, not a rejected promise)", () => {
    expect(() => createContext("")).toThrow(TypeError)
    expect(() => createContext("")).toThrow(BAD_NAME)
  })

  it("identity is the object, not the name: same-named contexts do not share values", async () => {
    const A = createContext<string>("Same")
    const B = createContext<string>("Same", "b-default")
    function Read() {
      return `${useContext(A)}/${useContext(B)}`
    }
    const tree = (
      <A.Provider value="a">
        <Read />
      </A.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("a/b-default")
  })
})

describe("<X.Provider> props (CTX-1)", () => {
  const Theme = createContext<unknown>("Theme")
  const Read = () => String(useContext(Theme))

  it("requires an own value prop: a missing key is an EvaluationError", async () => {
    const error = await failureOf(() => new AmlRuntime().evaluate(jsx(Theme.Provider as any, { children: <Read /> })))
    expectError(error, EvaluationError, "<Theme.Provider> requires a value prop")
  })

  it("accepts value: undefined (an own property) and provides undefined, not the default", async () => {
    const Defaulted = createContext<string | undefined>("Defaulted", "fallback")
    const ReadDefaulted = () => String(useContext(Defaulted))
    const tree = jsx(Defaulted.Provider, { children: <ReadDefaulted />, value: undefined })
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("undefined")
  })

  it("does not take value from the props' prototype (JSX copies own props only)", async () => {
    const props = Object.assign(Object.create({ value: "inherited" }), { children: <Read /> })
    const error = await failureOf(() => new AmlRuntime().evaluate(jsx(Theme.Provider as any, props)))
    expectError(error, EvaluationError, "<Theme.Provider> requires a value prop")
  })

  it("rejects a function carrying the context marker that no createContext() registered", async () => {
    const Fake = () => "never"
    Object.defineProperty(Fake, Symbol.for("@aml-jsx/sdk/primitive-kind"), { value: "context" })
    const error = await failureOf(() => new AmlRuntime().evaluate(jsx(Fake, { children: "x", value: 1 } as any)))
    expectError(error, EvaluationError, "AML encountered an unregistered Context Provider")
  })

  it("the Provider adds its children's text and never renders its value", async () => {
    let called = false
    const Bad = () => {
      called = true
      return "bad"
    }
    const value = <Bad />
    const Same = () => (useContext(Theme) === value ? "same" : "other")
    const tree = ["a", jsx(Theme.Provider, { children: ["b", <Same />], value }), "c"]
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("absamec")
    expect(called).toBe(false)
  })
})

describe("useContext (CTX-2)", () => {
  it("returns the nearest Provider's value", async () => {
    const Theme = createContext<string>("Theme")
    const Read = () => useContext(Theme)
    await expect(new AmlRuntime().evaluate(<Theme.Provider value="dark"><Read /></Theme.Provider>)).resolves.toBe("dark")
  })

  it("a required context with no Provider is an EvaluationError naming it", async () => {
    const X = createContext<string>("X")
    const error = await failureOf(() => new AmlRuntime().evaluate(jsx(() => useContext(X), {})))
    expectError(error, EvaluationError, 'Context "X" has no Provider or default value')
  })

  it("a defaulted context falls back to its default, even an explicit undefined", async () => {
    const WithDefault = createContext("WithDefault", "d")
    const UndefinedDefault = createContext<string | undefined>("UndefinedDefault", undefined)
    const Read = () => `${useContext(WithDefault)}|${String(useContext(UndefinedDefault))}`
    await expect(new AmlRuntime().evaluate(<Read />)).resolves.toBe("d|undefined")
  })

  it.each([[{}], [null], [undefined], ["Theme"], [{ name: "Theme", Provider() {} }]])(
    "rejects %s inside a component with a TypeError",
    async (value) => {
      const error = await failureOf(() => new AmlRuntime().evaluate(jsx(() => useContext(value as any), {})))
      expectError(error, TypeError, NOT_A_CONTEXT)
    },
  )

  it("rejects a context's Provider (not the context itself) with a TypeError", async () => {
    const Theme = createContext("Theme", 1)
    const error = await failureOf(() => new AmlRuntime().evaluate(jsx(() => useContext(Theme.Provider as any), {})))
    expectError(error, TypeError, NOT_A_CONTEXT)
  })
})

describe("useContext outside an active component (CTX-2 masking)", () => {
  // A default exists, so only the "active component" rule can make these calls fail.
  const Theme = createContext("Theme", "default")

  it("throws synchronously outside any evaluation", () => {
    let thrown: any
    try {
      useContext(Theme)
    } catch (error) {
      thrown = error
    }
    expectError(thrown, EvaluationError, ONLY_ACTIVE)
  })

  it("fails in detached work after the component settled (timer)", async () => {
    const seen = deferred<unknown>()
    function Component() {
      setTimeout(() => {
        try {
          seen.resolve(useContext(Theme))
        } catch (error) {
          seen.resolve(error)
        }
      }, 5)
      return useContext(Theme)
    }
    await expect(new AmlRuntime().evaluate(<Component />)).resolves.toBe("default")
    expectError(await seen.promise, EvaluationError, ONLY_ACTIVE)
  })

  it("fails after an async component resolved, even while the evaluation is still running", async () => {
    const caught: unknown[] = []
    async function Early() {
      setTimeout(() => {
        try {
          useContext(Theme)
        } catch (error) {
          caught.push(error)
        }
      }, 1)
      return "early"
    }
    async function Late() {
      await delay(30)
      return "late"
    }
    await expect(new AmlRuntime().evaluate([<Early />, <Late />])).resolves.toBe("earlylate")
    expect(caught).toHaveLength(1)
    expectError(caught[0], EvaluationError, ONLY_ACTIVE)
  })

  it("is masked inside a provider run(), even for an Agent inside a Provider", async () => {
    const caught: unknown[] = []
    const provider = {
      name: "p",
      async run(request: any) {
        try {
          useContext(Theme)
        } catch (error) {
          caught.push(error)
        }
        return { text: request.prompt }
      },
    }
    // Through a component-local evaluate(): the provider call then runs in the async
    // context of a component that is still active, so only masking can make it fail.
    async function Caller() {
      return await evaluate(<Agent provider={provider}>prompt</Agent>)
    }
    const tree = (
      <Theme.Provider value="v">
        <Agent provider={provider}>direct</Agent>
        <Caller />
      </Theme.Provider>
    )
    await expect(new AmlRuntime().evaluate(tree)).resolves.toBe("directprompt")
    expect(caught).toHaveLength(2)
    for (const error of caught) expectError(error, EvaluationError, ONLY_ACTIVE)
  })

  it("is masked inside trace, start and finish listeners", async () => {
    const caught: Record<string, unknown> = {}
    const attempt = (label: string) => (event?: any) => {
      if (label in caught || (label === "trace" && event.name !== "Inner")) return
      try {
        caught[label] = useContext(Theme)
      } catch (error) {
        caught[label] = error
      }
    }
    const runtime = new AmlRuntime()
    runtime.on("start", attempt("start"))
    runtime.on("finish", attempt("finish"))
    runtime.on("trace", attempt("trace"))
    // Inner's span.start is dispatched synchronously inside Outer's evaluate() call, while
    // Outer is active: only masking can make the trace listener's call fail.
    const Inner = () => useContext(Theme)
    const Outer = () => evaluate(<Inner />)
    await expect(runtime.evaluate(<Theme.Provider value="v"><Outer /></Theme.Provider>)).resolves.toBe("v")
    for (const label of ["start", "finish", "trace"]) expectError(caught[label], EvaluationError, ONLY_ACTIVE)
  })

  it("is masked in a Tool executor; capturing the value in the component is the documented way", async () => {
    const Session = createContext<{ user: string }>("Session")
    const caught: unknown[] = []
    function SupportAgent() {
      const session = useContext(Session)
      const whoami = defineTool({
        description: "Current user",
        execute: async () => {
          try {
            useContext(Session)
          } catch (error) {
            caught.push(error)
          }
          return session.user
        },
        input: z.object({}),
        name: "whoami",
      })
      return (
        <Agent>
          <Tool use={whoami} />
          Who?
        </Agent>
      )
    }
    const provider = {
      name: "p",
      async run(request: any, context: any) {
        return { text: String(await request.tools[0].execute({}, context)) }
      },
    }
    const tree = (
      <Session.Provider value={{ user: "ada" }}>
        <SupportAgent />
      </Session.Provider>
    )
    await expect(new AmlRuntime({ agentProvider: provider }).evaluate(tree)).resolves.toBe("ada")
    expect(caught).toHaveLength(1)
    expectError(caught[0], EvaluationError, ONLY_ACTIVE)
  })
})
