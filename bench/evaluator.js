// Evaluator workloads of the foundation issue: a wide tree of mixed sync/async function
// components, and a deep component chain.
import { AmlRuntime } from "../index.js"
import { jsx } from "../jsx-runtime/index.js"

import { measure } from "./harness.js"

const WIDE = 20_000
const DEEP = 2_000

function SyncLeaf() {
  return "s"
}

async function AsyncLeaf() {
  return "a"
}

function wideTree() {
  const children = []
  for (let i = 0; i < WIDE; i++) children.push(jsx(i % 2 === 0 ? SyncLeaf : AsyncLeaf, { i }))
  return jsx(function Root() {
    return children
  }, {})
}

function Chain({ n }) {
  return n === 0 ? "x" : jsx(Chain, { n: n - 1 })
}

export async function evaluatorBenchmarks() {
  const runtime = new AmlRuntime({ maxDepth: 0 })
  await measure("20,000 mixed sync/async components", {
    items: WIDE,
    run: () => runtime.evaluate(wideTree()),
  })
  await measure("2,000-deep component chain", {
    items: DEEP + 1,
    run: () => runtime.evaluate(jsx(Chain, { n: DEEP })),
  })
}
