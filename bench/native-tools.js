// Native Tool dispatch: the per-call cost of a JS Tool called from a tokio task through the
// weak threadsafe-function dispatcher (src/tools/dispatch.rs), next to the same Tool called by
// a JS provider, and the bare dispatcher round trip with a trivial wrapper (no pipeline).
// Standalone: `node bench/native-tools.js`; also exported for bench/run.js.
import { z } from "zod"

import { Agent, AmlRuntime, Tool, defineTool } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"
import { cancellationCreate, cancellationRelease, nativeScriptRun } from "../lib/core/native.js"
import { lendTools } from "../lib/tools/native-dispatch.js"
import { nativeScriptedProvider } from "../testing/index.js"

import { measure } from "./harness.js"

const CALLS = 2_000

const add = defineTool({
  description: "Add two numbers",
  execute: ({ a, b }) => ({ sum: a + b }),
  input: z.object({ a: z.number(), b: z.number() }),
  name: "add",
})

const steps = Array.from({ length: CALLS }, (_, i) => ({ input: { a: i, b: 1 }, tool: "add" }))
const grant = () => jsx(Agent, { children: [jsx(Tool, { use: add }), "add"] })

function jsProvider(concurrent) {
  return {
    name: "bench-js",
    async run(request, context) {
      const tool = request.tools[0]
      if (concurrent) await Promise.all(steps.map(({ input }) => tool.execute(input, context)))
      else for (const { input } of steps) await tool.execute(input, context)
      return { text: "done" }
    },
  }
}

/** The dispatcher alone: a lent wrapper that answers at once, no span, no validation. */
async function bareDispatch(concurrent) {
  const trivial = { description: "d", execute: (input) => input, inputSchema: {}, kind: "javascript", name: "add" }
  const lent = lendTools([trivial], new AbortController().signal)
  const token = cancellationCreate()
  try {
    await nativeScriptRun(token, JSON.stringify({ concurrent, steps }), lent.json)
  } finally {
    cancellationRelease(token)
    lent.release()
  }
}

export async function nativeToolBenchmarks() {
  for (const concurrent of [false, true]) {
    const mode = concurrent ? "concurrent" : "sequential"
    const js = new AmlRuntime({ agentProvider: jsProvider(concurrent) })
    await measure(`2,000 ${mode} Tool calls, JS provider`, { items: CALLS, run: () => js.evaluate(grant()) })
    const native = new AmlRuntime({ agentProvider: nativeScriptedProvider({ concurrent, steps }) })
    await measure(`2,000 ${mode} Tool calls, native provider`, { items: CALLS, run: () => native.evaluate(grant()) })
    await measure(`2,000 ${mode} bare dispatcher round trips`, { items: CALLS, run: () => bareDispatch(concurrent) })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`node ${process.version}, ${process.platform}-${process.arch}`)
  await nativeToolBenchmarks()
}
