// The OpenTelemetry exporter's cost on the 2,000 fanned-out Agents workload (bench/agents.js),
// against the OTel SDK's own cost per span (docs/OBSERVABILITY.md "Cost").
//
// Workload rows: no trace listener; a no-op trace listener (AML's public-event cost); a
// record sink that does nothing (AML's record path alone: the floor under any sink); the
// exporter on the API's no-op tracer (no SDK: what AML and the exporter add before any span
// exists); the exporter on `@opentelemetry/sdk-trace-base` with a no-op span processor, the
// in-memory exporter (`SimpleSpanProcessor`) and a `BatchSpanProcessor` (what production
// uses; its exporter discards each batch). Each Agent is one OTel span `invoke_agent FanOut`
// with the 12 attributes of the mapping.
//
// Reference rows: 2,000 SDK spans per round made exactly as the exporter makes an Agent's
// span (a fresh attributes object, `startSpan(name, { attributes, startTime }, parent)` with
// HrTime times under a cached parent context, `end(time)`) on the same three processors, plus
// a span without attributes and one of an Agent with a `model` (14 attributes). The same span
// costs more inside the workload than in a loop of its own (its code and data are no longer
// hot there): the inline rows make it once per provider call of the `none` workload, with no
// trace listener, and their overhead over `none` is the span's cost where the exporter makes it.
//
// Every variant runs in processes of its own (bench/otel-variant.js), PASSES times,
// alternating with the others so load drift on a shared machine hits them alike; a row is
// the median of its processes' medians. The target (issue 26 §1): the exporter's overhead per
// Agent at most 2× one SDK span made the same way, with the same processor.
import { spawnSync } from "node:child_process"
import { availableParallelism, loadavg } from "node:os"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./otel-variant.js", import.meta.url))

const VARIANTS = [
  ["none", "no trace listener"],
  ["noop-listener", "no-op trace listener"],
  ["empty-sink", "empty record sink (AML's record path alone)"],
  ["exporter-api", "exporter, API no-op tracer (no SDK)"],
  ["exporter-noop", "exporter, SDK no-op span processor", "span12-noop", "inline12-noop"],
  ["exporter-memory", "exporter, SDK in-memory exporter", "span12-memory", "inline12-memory"],
  ["exporter-batch", "exporter, SDK BatchSpanProcessor", "span12-batch", "inline12-batch"],
  ["span12-noop", "SDK span, Agent's 12 attributes, no-op"],
  ["span12-memory", "SDK span, Agent's 12 attributes, in-memory"],
  ["span12-batch", "SDK span, Agent's 12 attributes, batch"],
  ["inline12-noop", "the same span per provider call, no-op"],
  ["inline12-memory", "the same span per provider call, in-memory"],
  ["inline12-batch", "the same span per provider call, batch"],
  ["span0-noop", "SDK span, no attributes, no-op"],
  ["span14-noop", "SDK span, Agent with model (14), no-op"],
]

const PASSES = { steady: 5, "after-gc": 3 }

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const us = (value) => `${value.toFixed(2)} µs`

function runVariant(key, mode) {
  const child = spawnSync(process.execPath, ["--expose-gc", script, key, mode], { encoding: "utf8" })
  if (child.status !== 0) throw new Error(`OpenTelemetry bench variant ${key} failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split("\n").pop())
}

function measure(mode) {
  const samples = new Map(VARIANTS.map(([key]) => [key, { cpu: [], wall: [] }]))
  for (let pass = 0; pass < PASSES[mode]; pass++) {
    for (const [key] of VARIANTS) {
      const { cpu, wall } = runVariant(key, mode)
      samples.get(key).cpu.push(cpu)
      samples.get(key).wall.push(wall)
    }
  }
  return new Map([...samples].map(([key, { cpu, wall }]) => [key, { cpu: median(cpu), wall: median(wall) }]))
}

function report(mode, title) {
  const medians = measure(mode)
  const base = medians.get("none")
  console.log(title)
  for (const [key, label] of VARIANTS) {
    const { cpu, wall } = medians.get(key)
    const overhead =
      key === "none" || key.startsWith("span") ? "" : `  overhead vs none: wall ${us(wall - base.wall)}, CPU ${us(cpu - base.cpu)}`
    console.log(`  ${label.padEnd(44)} wall ${us(wall).padStart(9)}  CPU ${us(cpu).padStart(9)}${overhead}`)
  }
  for (const [key, label, floorKey, inlineKey] of VARIANTS) {
    if (floorKey === undefined) continue
    const own = medians.get(key)
    const floor = medians.get(floorKey)
    const wall = own.wall - base.wall
    const cpu = own.cpu - base.cpu
    console.log(
      `  ${label}: overhead / its SDK span: wall ${(wall / floor.wall).toFixed(2)}×, CPU ${(cpu / floor.cpu).toFixed(2)}× ` +
        `(target ≤ 2×; beyond the span: wall ${us(wall - floor.wall)}, CPU ${us(cpu - floor.cpu)})`,
    )
    // The same span made inside the workload: its overhead over "none" is what it costs there.
    // After a forced collection that overhead drowns in the re-optimization every round pays.
    if (mode !== "steady") continue
    const inline = medians.get(inlineKey)
    const inlineWall = inline.wall - base.wall
    const inlineCpu = inline.cpu - base.cpu
    console.log(
      `    against the span made per provider call (${us(inlineWall)} wall, ${us(inlineCpu)} CPU there): ` +
        `wall ${(wall / inlineWall).toFixed(2)}×, CPU ${(cpu / inlineCpu).toFixed(2)}×`,
    )
  }
}

export async function otelBenchmarks() {
  report("steady", `2,000 fanned-out Agents with the OpenTelemetry exporter (steady state: ${PASSES.steady} processes per row, medians per Agent or span)`)
  report("after-gc", `The same after a full collection before every round (${PASSES["after-gc"]} processes per row; the pessimistic figure)`)
  console.log(`  load average (1, 5, 15 min): ${loadavg().map((load) => load.toFixed(2)).join(", ")} on ${availableParallelism()} CPUs`)
}
