// createOpenTelemetryTracer loading and options: nothing from @opentelemetry is loaded unless
// the factory is called, a missing peer dependency is a clear Error, option TypeErrors, the
// frozen sink shape, and the default tracer from the global provider.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { trace } from "@opentelemetry/api"
import { describe, expect, it } from "vitest"

import { AmlRuntime, createOpenTelemetryTracer } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { memoryTracing } from "./support/otel.js"

const root = fileURLToPath(new URL("..", import.meta.url))

function node(args: string[], source: string) {
  const result = spawnSync(process.execPath, [...args, "--input-type=module", "-e", source], { cwd: root, encoding: "utf8" })
  return { status: result.status, stderr: result.stderr, stdout: result.stdout }
}

describe("loading @opentelemetry/api", () => {
  it("loads nothing from @opentelemetry when the exporter is unused", () => {
    const { status, stdout, stderr } = node(
      [],
      `import { createRequire } from "node:module"
       const { AmlRuntime, createConsoleTracer } = await import("./index.js")
       const runtime = new AmlRuntime({ trace: createConsoleTracer({ write: () => {} }) })
       await runtime.evaluate("x")
       const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes("@opentelemetry")).length
       const before = loaded()
       // The control: calling the factory is what loads the API (through the same require cache).
       ;(await import("./index.js")).createOpenTelemetryTracer()
       console.log(JSON.stringify({ after: loaded() > 0, before }))`,
    )
    expect(stderr).toBe("")
    expect(status).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ after: true, before: 0 })
  })

  it("throws an Error naming the package when it cannot be resolved", () => {
    // A preload that makes the package unresolvable from anywhere, like an install without it.
    const hide = `const M = require("node:module"); const r = M._resolveFilename;
      M._resolveFilename = function (request, ...rest) {
        if (request === "@opentelemetry/api") { const e = new Error("Cannot find module '@opentelemetry/api'"); e.code = "MODULE_NOT_FOUND"; throw e }
        return r.call(this, request, ...rest)
      }`
    const dir = mkdtempSync(join(tmpdir(), "aml-otel-"))
    const preload = join(dir, "hide-otel.cjs")
    writeFileSync(preload, hide)
    let result
    try {
      result = node(["-r", preload],
      `const { createOpenTelemetryTracer } = await import("./index.js")
       try { createOpenTelemetryTracer() } catch (error) {
         console.log(JSON.stringify({ cls: error.constructor.name, message: error.message, cause: error.cause?.code }))
       }`,
      )
    } finally {
      rmSync(dir, { force: true, recursive: true })
    }
    const { status, stdout, stderr } = result
    expect(stderr).toBe("")
    expect(status).toBe(0)
    expect(JSON.parse(stdout)).toEqual({
      cause: "MODULE_NOT_FOUND",
      cls: "Error",
      message:
        'createOpenTelemetryTracer requires the optional peer dependency "@opentelemetry/api"; install it with `npm install @opentelemetry/api`',
    })
  })
})

describe("options and sink shape", () => {
  it("rejects a non-boolean captureContent and a tracer without startSpan", () => {
    for (const captureContent of ["yes", 1, null]) {
      expect(() => createOpenTelemetryTracer({ captureContent } as any)).toThrow(
        new TypeError("createOpenTelemetryTracer captureContent must be a boolean"),
      )
    }
    for (const tracer of [null, {}, { startSpan: 1 }]) {
      let thrown: unknown
      try {
        createOpenTelemetryTracer({ tracer } as any)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(TypeError)
      expect((thrown as Error).message).toBe("createOpenTelemetryTracer tracer must be an OpenTelemetry Tracer")
    }
  })

  it("returns a frozen sink with a non-writable enumerable captureContent", () => {
    const sink = createOpenTelemetryTracer({ captureContent: true })
    expect(Object.isFrozen(sink)).toBe(true)
    expect(Object.getOwnPropertyDescriptor(sink, "captureContent")).toMatchObject({ enumerable: true, value: true, writable: false })
    expect(createOpenTelemetryTracer().captureContent).toBe(false)
  })

  it("uses the global tracer provider by default, with the SDK's name and version", async () => {
    const { exporter, provider } = memoryTracing()
    expect(trace.setGlobalTracerProvider(provider)).toBe(true)
    try {
      const runtime = new AmlRuntime({ trace: createOpenTelemetryTracer() })
      await runtime.evaluate(jsx(function Hello() { return "hi" }, {}))
      const spans = exporter.getFinishedSpans()
      expect(spans.map((span) => span.name)).toEqual(["component Hello", "aml.evaluate"])
      const { version } = await import("../package.json", { with: { type: "json" } })
      expect(spans[0]!.instrumentationScope).toMatchObject({ name: "@aml-jsx/sdk", version: version.version ?? version })
    } finally {
      trace.disable()
    }
  })

  it("ignores events of spans it never saw (attached mid-run)", () => {
    const { exporter, tracer } = memoryTracing()
    const sink = createOpenTelemetryTracer({ tracer }) as (event: unknown) => unknown
    const attributes = Object.freeze(Object.create(null))
    sink({ type: "span.end", runId: "r", spanId: "span-9", sequence: 5, timestamp: 0, kind: "agent", name: "Agent", status: "ok", durationMs: 1, attributes })
    sink({ type: "event", runId: "r", spanId: "span-9", sequence: 6, timestamp: 0, name: "agent.output", attributes })
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
