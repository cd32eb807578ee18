// <Script> inside a Sandbox (SC-1: lease.runtime.exec, cwd from the Sandbox root, never the
// host) and the `script` span (INVENTORY §2.3) for both environments.
import { describe, expect, test } from "vitest"

import { AmlRuntime, EvaluationError, Sandbox, Script } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { deferred, traceRecorder } from "./support/async.js"

type Call = { command: string; args: string[]; options: Record<string, unknown>; request: unknown }

function sandboxed(answer: (call: Call) => unknown = () => ({ exitCode: 0, stderr: "", stdout: "from sandbox\n" })) {
  const calls: Call[] = []
  const provider = new DeterministicSandboxProvider({
    exec: (command: string, args: readonly string[], request: unknown, options: any) => {
      const call = { args: [...args], command, options, request }
      calls.push(call)
      return answer(call) as any
    },
    name: "recording",
  })
  const { events, sink } = traceRecorder()
  const runtime = new AmlRuntime({ cwd: "/definitely/not/used", sandboxProvider: provider, trace: sink })
  return { calls, events, runtime }
}

describe("Sandbox execution", () => {
  test("command form: runtime.exec with the session cwd and the evaluation signal; stdout joins the channel", async () => {
    const { calls, runtime } = sandboxed()
    const controller = new AbortController()
    const out = await runtime.evaluate(
      <Sandbox root="repo" cwd="packages/api">
        [<Script command="node" args={["--version"]} />]
      </Sandbox>,
      { signal: controller.signal },
    )
    expect(out).toBe("[from sandbox\n]")
    expect(calls).toHaveLength(1)
    const [{ args, command, options }] = calls
    expect(command).toBe("node")
    expect(args).toEqual(["--version"])
    expect(Object.keys(options).sort()).toEqual(["cwd", "signal"])
    expect(options.cwd).toBe("repo/packages/api")
    expect(options.signal).toBeInstanceOf(AbortSignal)
  })

  test("an explicit cwd resolves from the Sandbox root, not its cwd; timeoutMs is passed on", async () => {
    const { calls, runtime } = sandboxed()
    await runtime.evaluate(
      <Sandbox root="repo" cwd="packages/api">
        <Script command="true" cwd="tools/./bin" timeoutMs={1234} />
      </Sandbox>,
    )
    expect(calls[0]!.options).toMatchObject({ cwd: "repo/tools/bin", timeoutMs: 1234 })
  })

  test("a nested Sandbox that narrows only cwd still runs, from the nested cwd", async () => {
    const { calls, runtime } = sandboxed()
    await runtime.evaluate(
      <Sandbox>
        <Sandbox cwd="lib">
          <Script command="true" />
        </Sandbox>
      </Sandbox>,
    )
    expect(calls[0]!.options.cwd).toBe("lib")
  })

  test.each([
    ["sh", ["-c"]],
    ["bash", ["-c"]],
    ["node", ["--input-type=module", "--eval"]],
  ])("shell form %s: exec(shell, interpreter args + source)", async (shell, prefix) => {
    const { calls, runtime } = sandboxed()
    await runtime.evaluate(
      <Sandbox>
        <Script shell={shell as any}>{"  run me  "}</Script>
      </Sandbox>,
    )
    expect(calls[0]).toMatchObject({ args: [...prefix, "run me"], command: shell })
  })

  test("a non-zero exit fails with the trimmed stderr", async () => {
    const { runtime } = sandboxed(() => ({ exitCode: 9, stderr: "\n denied \n", stdout: "partial" }))
    const error: any = await runtime.evaluate(<Sandbox><Script command="x" /></Sandbox>).catch((e) => e)
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toBe("<Script> exited with code 9: denied")
  })

  test("a failing runtime.exec propagates unchanged", async () => {
    const failure = new Error("provider down")
    const { runtime } = sandboxed(() => Promise.reject(failure))
    await expect(runtime.evaluate(<Sandbox><Script command="x" /></Sandbox>)).rejects.toBe(failure)
  })

  test("cancellation during runtime.exec rejects with the reason, even if the provider ignores it", async () => {
    const never = deferred<any>()
    const { calls, runtime } = sandboxed(() => never.promise)
    const controller = new AbortController()
    const run = runtime.evaluate(<Sandbox><Script command="x" /></Sandbox>, { signal: controller.signal })
    while (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1))
    const reason = new Error("cancelled")
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    expect((calls[0]!.options.signal as AbortSignal).aborted).toBe(true)
  })
})

describe("script spans", () => {
  const scriptEvents = (events: any[]) => events.filter((event) => event.kind === "script")

  test("host command: environment, mode, command; end exitCode and lengths", async () => {
    const { events, sink } = traceRecorder()
    const runtime = new AmlRuntime({ trace: sink })
    await runtime.evaluate(<Script shell="sh">{"printf 'héllo'; printf 'e' >&2"}</Script>)
    await runtime.evaluate(<Script command="printf" args={["ok"]} />)
    const [start, end, commandStart, commandEnd] = scriptEvents(events)
    expect(start).toMatchObject({ name: "Script", parentSpanId: "trace-0", spanId: "span-1", type: "span.start" })
    expect({ ...start.attributes }).toEqual({ environment: "host", mode: "interpreted", shell: "sh" })
    expect(end).toMatchObject({ spanId: "span-1", status: "ok", type: "span.end" })
    expect({ ...end.attributes }).toEqual({ exitCode: 0, stderrLength: 1, stdoutLength: 5 })
    expect({ ...commandStart.attributes }).toEqual({ command: "printf", environment: "host", mode: "command" })
    expect({ ...commandEnd.attributes }).toEqual({ exitCode: 0, stderrLength: 0, stdoutLength: 2 })
  })

  test("sandbox: environment sandbox; the span nests under the Sandbox span", async () => {
    const { events, runtime } = sandboxed(() => ({ exitCode: 0, stderr: "warn", stdout: "abc" }))
    await runtime.evaluate(<Sandbox><Script command="x" /></Sandbox>)
    const sandboxStart = events.find((event) => event.kind === "sandbox" && event.type === "span.start")
    const [start, end] = scriptEvents(events)
    expect(start.parentSpanId).toBe(sandboxStart.spanId)
    expect(start.spanId).toMatch(/^span-\d+$/)
    expect({ ...start.attributes }).toEqual({ command: "x", environment: "sandbox", mode: "command" })
    expect({ ...end.attributes }).toEqual({ exitCode: 0, stderrLength: 4, stdoutLength: 3 })
  })

  test("a failed Script ends its span with status error", async () => {
    const { events, sink } = traceRecorder()
    const runtime = new AmlRuntime({ trace: sink })
    await runtime.evaluate(<Script shell="sh">{"exit 5"}</Script>).catch(() => {})
    const end = scriptEvents(events).find((event) => event.type === "span.end")
    expect(end.status).toBe("error")
    expect(end.attributes["error.type"]).toBe("EvaluationError")
    expect(end.attributes["error.message"]).toBe("<Script> exited with code 5")
  })
})
