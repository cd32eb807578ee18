// How cost grows with the size of the work (issue 26 §3): components, fanned-out Agents and
// Tool calls at 2,000 / 20,000 / 200,000 items, and 10,000 Agents in flight at once.
//
// Every size runs in the same process after a warm-up at that size, and the per-item median
// of each size is compared with the smallest one: a data structure that grows with the tree
// and costs more than O(1) per step shows up as a ratio well above 1. The target is ≤ 1.25×
// at 200,000 against 2,000.
//
// Two methods, both printed:
//   after a full GC  each round starts from a collected heap (the first method of this
//                    group). A forced full collection also deoptimizes most hot functions
//                    (V8 embeds objects weakly in optimized code; --trace-deopt says "weak
//                    objects"), so small rounds pay a re-optimization the large ones amortize.
//   steady state     no forced collection, as `npm run bench -- agents`: each round pays the
//                    collections its own garbage causes, at whatever heap size it runs.
// Fanned-out Agents are also run 2,000 in flight at a time (sequential batches inside one
// component): if that row stays flat while the all-at-once row grows, the growth comes from
// how many Agents are in flight (their memory no longer fits the caches and the young
// generation), not from any structure that grows with the total. A plain-JS reference row
// (async calls holding about an in-flight Agent's JS heap each, all at once, no AML) shows
// what that costs V8 alone; another walks the components row's tree in plain JS.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { Agent, AmlRuntime, Tool, evaluate } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { add } from "./tools.js"

const SIZES = [2_000, 20_000, 200_000]
const IN_FLIGHT = 10_000
const BATCH = 2_000

/** Rounds per size: enough for a median, bounded so 200,000 items stay a few seconds. */
function roundsFor(items, steady) {
  if (steady) return items >= 200_000 ? 7 : items >= 20_000 ? 15 : 41
  return items >= 200_000 ? 5 : items >= 20_000 ? 7 : 11
}

async function perItem(items, run, steady) {
  const rounds = roundsFor(items, steady)
  // Warm-up covers at least 100,000 items at every size, so the small sizes are measured
  // with the same optimized code as the large ones, not against a colder JIT.
  for (let done = 0; done < Math.max(items, 100_000); done += items) await run()
  globalThis.gc?.()
  const samples = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await run()
    samples.push(((performance.now() - started) * 1000) / items)
    // After-GC method: each round starts from a collected heap.
    if (!steady) globalThis.gc?.()
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]
}

async function group(label, workload) {
  for (const steady of [false, true]) {
    const medians = []
    for (const items of SIZES) medians.push(await perItem(items, () => workload(items), steady))
    const cells = SIZES.map((items, i) => `${items.toLocaleString("en-US")}: ${medians[i].toFixed(2)} µs`).join(", ")
    const ratio = medians[medians.length - 1] / medians[0]
    const method = steady ? "steady" : "after GC"
    console.log(`${`${label}, ${method}`.padEnd(44)} ${cells}  (200,000 / 2,000: ${ratio.toFixed(2)}×, target ≤ 1.25×)`)
  }
}

// --- the workloads -------------------------------------------------------------------------

function SyncLeaf() {
  return "s"
}

async function AsyncLeaf() {
  return "a"
}

function components(items) {
  const children = []
  for (let i = 0; i < items; i++) children.push(jsx(i % 2 === 0 ? SyncLeaf : AsyncLeaf, { i }))
  return jsx(function Root() {
    return children
  }, {})
}

/**
 * The reference for the components row: the same tree (built the same way, inside the round)
 * walked by plain JS, no AML: each component called once, the async ones awaited together.
 * What building and holding that many descriptors costs V8 itself as the tree grows.
 */
async function plainComponents(items) {
  const root = components(items)
  const values = []
  for (const child of root.type(root.props)) values.push(child.type(child.props))
  return (await Promise.all(values)).join("")
}

function FanOut({ items }) {
  // Pushed, as user code builds it (a preallocated array is holey, a slower kind for V8).
  const pending = []
  for (let i = 0; i < items; i++) pending.push(evaluate(jsx(Agent, { children: `task ${i}` })))
  return Promise.all(pending).then((results) => results.length)
}

/**
 * The reference for the all-at-once fan-out: plain JS, no AML. Each item is an async call that
 * holds about what an in-flight fanned-out Agent holds on the JS heap (six small objects,
 * ~1.3 KiB) across one await, then reads them back. It shows what holding that much per
 * item, all items at once, costs V8 itself as the count grows.
 */
async function plainItem(i) {
  const state = []
  for (let k = 0; k < 6; k++) state.push({ a: i, b: k, c: null, d: undefined, e: "x", f: 0, g: 0, h: 0, i: 0, j: 0, k: 0, l: 0 })
  await null
  let sum = 0
  for (const object of state) sum += object.b
  return sum
}

function plainFanOut(items) {
  const pending = []
  for (let i = 0; i < items; i++) pending.push(plainItem(i))
  return Promise.all(pending)
}

/** `items` Agents, BATCH in flight at a time: the total grows, the in-flight count does not. */
async function BatchedFanOut({ items }) {
  let settled = 0
  for (let done = 0; done < items; done += BATCH) {
    const pending = []
    for (let i = 0; i < BATCH; i++) pending.push(evaluate(jsx(Agent, { children: `task ${done + i}` })))
    settled += (await Promise.all(pending)).length
  }
  return settled
}

function toolCaller(items) {
  return {
    name: "bench",
    async run(request, context) {
      const tool = request.tools[0]
      for (let i = 0; i < items; i++) await tool.execute({ a: i, b: 1 }, context)
      return { text: "done" }
    },
  }
}

const echo = {
  name: "bench",
  async run(request) {
    return { text: request.prompt.length > 40 ? "long" : request.prompt }
  },
}

/**
 * 10,000 Agents in flight at once, each in a fresh process (bench/scaling-in-flight.js) so
 * the RSS it reports is that run's own growth, not a previous round's heap; median of 5.
 */
function inFlight() {
  const script = fileURLToPath(new URL("./scaling-in-flight.js", import.meta.url))
  const runs = []
  for (let i = 0; i < 5; i++) {
    const child = spawnSync(process.execPath, ["--expose-gc", script, String(IN_FLIGHT)], { encoding: "utf8" })
    if (child.status !== 0) throw new Error(`in-flight run failed: ${child.stderr}`)
    runs.push(JSON.parse(child.stdout))
  }
  const median = (key) => runs.map((run) => run[key]).sort((a, b) => a - b)[2]
  console.log(
    `${"10,000 Agents in flight (50 ms timer)".padEnd(44)} ${median("usPerAgent").toFixed(2)} µs/Agent beyond the timer, ` +
      `peak RSS ${(median("rssPerAgent") / 1024).toFixed(2)} KiB and JS heap ${(median("heapPerAgent") / 1024).toFixed(2)} KiB ` +
      "per in-flight Agent (median of 5 processes)",
  )
}

export async function scalingBenchmarks() {
  const plain = new AmlRuntime({ maxDepth: 0 })
  await group("components (mixed sync/async)", (items) => plain.evaluate(components(items)))

  const agents = new AmlRuntime({ agentProvider: echo, maxAgentCalls: 0, maxConcurrentAgents: 0 })
  await group("fanned-out Agents", (items) => agents.evaluate(jsx(FanOut, { items })))
  await group(`fanned-out Agents, ${BATCH.toLocaleString("en-US")} in flight`, (items) => agents.evaluate(jsx(BatchedFanOut, { items })))

  const runtimes = new Map(SIZES.map((items) => [items, new AmlRuntime({ agentProvider: toolCaller(items) })]))
  const grant = jsx(Agent, { children: [jsx(Tool, { use: add }), "add"] })
  await group("Tool calls from a provider", (items) => runtimes.get(items).evaluate(grant))

  // The plain-JS references last, so their garbage and heap growth never precede an AML row.
  await group("plain JS reference, components", plainComponents)
  await group("plain JS reference, all in flight", plainFanOut)

  inFlight()
}
