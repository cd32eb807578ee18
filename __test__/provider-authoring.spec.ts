// defineAgentProvider and createAgentProviderTurns (INVENTORY PA-2, PA-5): exact TypeErrors,
// freezing, read-once members and the shape of the turns.
import { describe, expect, it } from "vitest"

import {
  Agent,
  AmlRuntime,
  createAgentProviderTurns,
  defineAgentProvider,
  type AgentOutputRequest,
  type AgentRequest,
} from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

function thrown(fn: () => unknown): any {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

function expectTypeError(fn: () => unknown, message: string) {
  const error = thrown(fn)
  expect(error).toBeInstanceOf(TypeError)
  expect(error.message).toBe(message)
}

const request = (extra: Partial<AgentRequest> = {}): AgentRequest =>
  ({
    mcpServers: [],
    permissions: { filesystem: "read-write", network: true, shell: true },
    prompt: "first",
    system: "",
    tools: [],
    ...extra,
  }) as AgentRequest

describe("defineAgentProvider", () => {
  it("returns the same object, shallow-frozen", () => {
    const options = { retries: 1 }
    const impl = { name: "direct", options, run: async () => ({ text: "ok" }) }
    const defined = defineAgentProvider(impl)
    expect(defined).toBe(impl)
    expect(Object.isFrozen(defined)).toBe(true)
    expect(Object.isFrozen(options)).toBe(false)
  })

  it("keeps private #fields of a class instance working inside an evaluation", async () => {
    class Counter {
      readonly name = "counter"
      #count = 0
      async run() {
        this.#count += 1
        return { text: `call ${this.#count}` }
      }
    }
    const provider = defineAgentProvider(new Counter())
    const runtime = new AmlRuntime({ agentProvider: provider })
    await expect(runtime.evaluate(jsx(Agent, { children: "x" }))).resolves.toBe("call 1")
    await expect(runtime.evaluate(jsx(Agent, { children: "x", provider }))).resolves.toBe("call 2")
  })

  it("accepts a supportsSandbox function and leaves it callable", () => {
    const provider = defineAgentProvider({
      name: "sandboxed",
      run: async () => ({ text: "" }),
      supportsSandbox: (_sandbox: unknown) => true,
    })
    expect(provider.supportsSandbox?.({} as never)).toBe(true)
  })

  it.each([
    [null, "Agent provider must be an object"],
    ["provider", "Agent provider must be an object"],
    [() => undefined, "Agent provider must be an object"],
    [{ run: async () => ({ text: "" }) }, "Agent provider name must be a non-empty string"],
    [{ name: "", run: async () => ({ text: "" }) }, "Agent provider name must be a non-empty string"],
    [{ name: 7, run: async () => ({ text: "" }) }, "Agent provider name must be a non-empty string"],
    [{ name: " padded", run: async () => ({ text: "" }) }, "Agent provider name must already be normalized"],
    [{ name: "padded\n", run: async () => ({ text: "" }) }, "Agent provider name must already be normalized"],
    [{ name: "no-run" }, "Agent provider run must be a function"],
    [{ name: "no-run", run: "run" }, "Agent provider run must be a function"],
    [
      { name: "bad", run: async () => ({ text: "" }), supportsSandbox: true },
      "Agent provider supportsSandbox must be a function when provided",
    ],
  ])("rejects %j with the exact TypeError", (value, message) => {
    expectTypeError(() => defineAgentProvider(value as never), message)
  })

  it("does not freeze a provider it rejects", () => {
    const impl = { name: "" }
    thrown(() => defineAgentProvider(impl as never))
    expect(Object.isFrozen(impl)).toBe(false)
  })
})

describe("createAgentProviderTurns", () => {
  it("builds one final turn without output for a plain request", () => {
    const turns = createAgentProviderTurns(request(), "p")
    expect(turns).toEqual([{ index: 0, isFinal: true, prompt: "first" }])
    expect(Object.keys(turns[0]!)).toEqual(["index", "isFinal", "prompt"])
    expect(Object.isFrozen(turns)).toBe(true)
    expect(Object.isFrozen(turns[0])).toBe(true)
  })

  it("orders the prompt before each follow-up and marks only the last turn final", () => {
    const turns = createAgentProviderTurns(request({ followUps: ["second", "third"] }), "p")
    expect(turns).toEqual([
      { index: 0, isFinal: false, prompt: "first" },
      { index: 1, isFinal: false, prompt: "second" },
      { index: 2, isFinal: true, prompt: "third" },
    ])
    for (const turn of turns) expect(Object.isFrozen(turn)).toBe(true)
  })

  it("gives the structured-output request to the final turn only", () => {
    const output: AgentOutputRequest = { jsonSchema: { type: "object" }, type: "json" }
    const turns = createAgentProviderTurns(request({ followUps: ["second"], output }), "p")
    expect("output" in turns[0]!).toBe(false)
    expect(turns[1]!.output).toBe(output)
    expect(Object.keys(turns[1]!)).toEqual(["index", "isFinal", "output", "prompt"])
    const single = createAgentProviderTurns(request({ output }), "p")
    expect(single[0]!.output).toBe(output)
  })

  it("treats an empty followUps array as no follow-ups", () => {
    expect(createAgentProviderTurns(request({ followUps: [] }), "p")).toHaveLength(1)
  })

  it("reads followUps, output and prompt once each", () => {
    const reads: string[] = []
    const source: Record<string, unknown> = { followUps: ["b"], output: undefined, prompt: "a" }
    const tracked = new Proxy(source, {
      get(target, key) {
        reads.push(String(key))
        return target[key as string]
      },
    })
    createAgentProviderTurns(tracked as never, "p")
    expect(reads.sort()).toEqual(["followUps", "output", "prompt"])
  })

  it.each([["second"], [{ length: 1, 0: "x" }], [null], [7]])("rejects followUps %j that is not an array", (value) => {
    expectTypeError(
      () => createAgentProviderTurns(request({ followUps: value as never }), "named"),
      'Agent provider "named" followUps must be an array',
    )
  })

  it.each([[[""]], [["ok", 3]], [["ok", undefined]], [[{ text: "x" }]]])(
    "rejects followUps %j with a non-string or empty entry",
    (value) => {
      expectTypeError(
        () => createAgentProviderTurns(request({ followUps: value as never }), "named"),
        'Agent provider "named" followUps must contain non-empty strings',
      )
    },
  )
})
