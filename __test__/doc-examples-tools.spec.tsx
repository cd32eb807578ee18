// The documented Tool examples (reference/primitives/tool.mdx and cookbook/tools.mdx),
// run as written with the deterministic provider from the testing entry.
import { Agent, AmlRuntime, defineTool, Tool } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"
import { expect, test } from "vitest"
import { z } from "zod"

test("reference: a granted lookup_order Tool reaches the provider and the default echo answers", async () => {
  const lookupOrder = defineTool({
    name: "lookup_order",
    description: "Read one order by its public identifier",
    input: z.object({ id: z.string() }),
    execute: async ({ id }) => ({ id, status: "paid" }),
  })
  const agentProvider = new DeterministicAgentProvider()
  const runtime = new AmlRuntime({ agentProvider })
  const result = await runtime.evaluate(
    <Agent>
      <Tool use={lookupOrder} />
      Summarize order A-42.
    </Agent>,
  )
  expect(result).toBe("Summarize order A-42.")
  const [{ request, context }] = agentProvider.calls
  expect(request.tools.map((tool) => tool.name)).toEqual(["lookup_order"])
  const tool = request.tools[0]!
  await expect(tool.execute({ id: "A-42" }, { signal: context.signal, trace: context.trace })).rejects.toThrow(
    'Tool "lookup_order" was called after its Agent completed',
  )
})

test("cookbook: a session Tool is executed by the provider and its JSON output is returned", async () => {
  class SessionRepository {
    async listOrders(): Promise<readonly string[]> {
      return ["order-17", "order-29"]
    }
  }

  const provider = new DeterministicAgentProvider({
    async respond(request, context) {
      const tool = request.tools.find((candidate) => candidate.name === "list_session_orders")
      if (tool?.kind !== "javascript") throw new Error("Session Tool was not granted")
      const orders = await tool.execute({}, { signal: context.signal, trace: context.trace })
      return { text: `orders:` + JSON.stringify(orders) }
    },
  })

  function OrderAgent({ repository }: { repository: SessionRepository }) {
    const listOrders = defineTool({
      description: "List orders for the active application session.",
      execute: async () => await repository.listOrders(),
      input: z.object({}),
      name: "list_session_orders",
    })
    return (
      <Agent provider={provider}>
        <Tool use={listOrders} />
        Inspect the active session orders.
      </Agent>
    )
  }

  const result = await new AmlRuntime().evaluate(<OrderAgent repository={new SessionRepository()} />)
  expect(result).toBe('orders:["order-17","order-29"]')
})
