// Helpers for the <Loop> specs: a scripted inline provider that drives `aml_set_state`
// through `request.tools`, the way a real provider's model would.
import { z } from "zod"

/** What one scripted provider call may do. */
export type Turn = {
  request: any
  context: any
  /** The `aml_set_state` wrapper the provider received (undefined when not granted). */
  tool: any
  /** `tool.execute({ updates }, context)`. */
  set(updates: unknown): Promise<any>
}

export type Script = (turn: Turn) => unknown

/**
 * A provider that runs `scripts[i]` for its i-th call (the last one repeats) and answers with
 * what the script returns (awaited), as text.
 */
export function scripted(...scripts: Script[]) {
  const requests: any[] = []
  const provider = {
    name: "scripted",
    async run(request: any, context: any) {
      const script = scripts[Math.min(requests.length, scripts.length - 1)]
      requests.push(request)
      const tool = request.tools.find((entry: any) => entry.name === "aml_set_state")
      const set = (updates: unknown) => tool.execute({ updates }, context)
      return { text: String(await script({ context, request, set, tool })) }
    },
  }
  return { provider, requests }
}

/** A counter state: `{ count }`, a non-negative integer. */
export const Counter = z.object({ count: z.number().int().min(0) })

/** A script that increments `count` until it reaches `until`, answering "n=<count>". */
export function countTo(until: number): Script {
  return async ({ request, set }) => {
    const count = Number(/count=(\d+)/.exec(request.prompt)?.[1])
    if (count < until) await set({ count: count + 1 })
    return `n=${count}`
  }
}

/** The documented aml_set_state description for a Loop `name` with `keys`. */
export function stateToolDescription(name: string, keys: string) {
  return (
    `Stage a "${name}" state patch for the next Loop iteration. State does not change during this Agent session. ` +
    `Put coupled field changes in one updates object. Allowed keys: ${keys}. ` +
    "When staged state differs, finish the session so AML can commit it."
  )
}
