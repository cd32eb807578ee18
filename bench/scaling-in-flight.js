// One measurement of N Agents in flight at once (bench/scaling.js runs it in fresh
// processes): every provider call waits on a 50 ms timer, and the RSS is read when the last
// call has started, so every Agent is pending. Prints `{ usPerAgent, rssPerAgent,
// heapPerAgent }`: the wall time beyond the timer per Agent, and the RSS and V8 heap growth
// per in-flight Agent in bytes (RSS also counts the engine's tasks and V8's young generation).
import { Agent, AmlRuntime, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

const count = Number(process.argv[2] ?? 10_000)
const TIMER_MS = 50
let target = 0
let started = 0
let peak = 0
let heapPeak = 0

const provider = {
  name: "bench",
  run(request) {
    if (++started === target) {
      const usage = process.memoryUsage()
      peak = usage.rss
      heapPeak = usage.heapUsed
    }
    return new Promise((resolve) => setTimeout(() => resolve({ text: request.prompt }), TIMER_MS))
  },
}

function FanOut({ items }) {
  // Pushed, as user code builds it (a preallocated array is holey, a slower kind for V8).
  const pending = []
  for (let i = 0; i < items; i++) pending.push(evaluate(jsx(Agent, { children: `task ${i}` })))
  return Promise.all(pending).then((results) => results.length)
}

const runtime = new AmlRuntime({ agentProvider: provider, maxAgentCalls: 0, maxConcurrentAgents: 0 })

// A small run first loads the code paths, so the measured run's growth is the Agents' own.
target = 100
started = 0
await runtime.evaluate(jsx(FanOut, { items: target }))
globalThis.gc?.()
target = count
started = 0
const { heapUsed: heapBefore, rss: before } = process.memoryUsage()
const t0 = performance.now()
await runtime.evaluate(jsx(FanOut, { items: count }))
const wall = performance.now() - t0
process.stdout.write(JSON.stringify({ usPerAgent: ((wall - TIMER_MS) * 1000) / count, rssPerAgent: (peak - before) / count, heapPerAgent: (heapPeak - heapBefore) / count }))
