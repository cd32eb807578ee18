// The Sandbox MCP relay (INVENTORY BA-0 "Sandbox relay"): a guest that cannot reach the
// host's loopback gets the bridge through relay.cjs, started with `node` in the guest from
// /tmp/aml-mcp-relay-<uuid>/. Proven with a Sandbox in a private network namespace (the
// scripted agent's official MCP client calls a JS Tool and submits structured output through
// the relay) and with DeterministicSandboxProvider processes for the documented failures.
// Every relay process is killed and reaped, its directory removed.
import { spawnSync } from "node:child_process"
import { createServer } from "node:http"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Sandbox, Tool, defineTool, evaluate } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { liveAcpBridges, liveAcpRelays, liveAcpSessions } from "../lib/core/native.js"
import { scriptedAcp, type LaunchOverrides } from "./support/acp.js"
import { rejection } from "./support/errors.js"
import { netnsAvailable, netnsSandbox } from "./support/netns-sandbox.js"
import { exists } from "./support/processes.js"
import { hasGroup, titleNeeding } from "./support/test-groups.js"

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-relay-")))
mkdirSync(join(workspace, "repo"), { recursive: true })
beforeAll(() => {
  // Agents stopped here get 300 ms to honour a cancel and to exit (docs/ACP.md, settings).
  process.env.AML_ACP_CANCEL_GRACE_MS = "300"
  process.env.AML_ACP_KILL_GRACE_MS = "300"
})
afterAll(() => {
  delete process.env.AML_ACP_CANCEL_GRACE_MS
  delete process.env.AML_ACP_KILL_GRACE_MS
  rmSync(workspace, { force: true, recursive: true })
})

const echo = defineTool({
  description: "Echoes",
  execute: ({ text }: { text: string }) => `echo: ${text}`,
  input: z.object({ text: z.string() }),
  name: "echo",
})

const RELAY_PATH = /^\/tmp\/aml-mcp-relay-[0-9a-f-]{36}\/relay\.cjs$/
const pidOf = (id: string) => Number(/^local-process:(\d+)$/.exec(id)![1])

function run(provider: any, text: string, overrides: LaunchOverrides, children?: any, schema?: any) {
  const { contexts, provider: agentProvider } = scriptedAcp(overrides)
  const runtime = new AmlRuntime({ agentProvider, sandboxProvider: provider })
  const tree = (
    <Sandbox access="read-write" root="repo">
      <Agent>
        {children}
        {text}
      </Agent>
    </Sandbox>
  )
  // Structured output needs an AML execution context: a component's evaluate().
  const Probe = async () => JSON.stringify(await evaluate(tree, schema))
  const result = schema === undefined ? runtime.evaluate(tree) : runtime.evaluate(<Probe />).then(JSON.parse)
  return { contexts, result }
}

// Needs root (unshare -n): skipped, and named so (scripts/test-groups.js), without it.
const netns = hasGroup("root") && netnsAvailable()
describe.skipIf(!netns)(titleNeeding("Sandbox MCP relay in a guest without the host's loopback (network namespace)", netns, "root"), () => {
  it("the guest really cannot reach a server on the host's 127.0.0.1", async () => {
    const server = createServer((_, response) => response.end("host"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as any).port
    const { provider } = netnsSandbox(workspace)
    const lease = await provider.acquire({ access: "read-write", cwd: ".", evaluationId: "probe", root: ".", signal: new AbortController().signal })
    try {
      const probe = `require("net").connect(${port}, "127.0.0.1").on("connect", () => { console.log("connected"); process.exit(0) }).on("error", (e) => { console.log(e.code); process.exit(0) })`
      const guest = spawnSync("nsenter", ["-t", String(lease.handle.pid), "-n", "--", process.execPath, "-e", probe], { encoding: "utf8" })
      expect(guest.stdout.trim()).toBe("ECONNREFUSED")
      const host = spawnSync(process.execPath, ["-e", probe], { encoding: "utf8" })
      expect(host.stdout.trim()).toBe("connected")
    } finally {
      await lease.release()
      server.close()
    }
  })

  it("serves JS Tools to the sandboxed agent through the relay, then kills and reaps it", async () => {
    const { provider, spawned } = netnsSandbox(workspace)
    const { contexts, result } = run(provider, 'call-tool echo {"text":"hi"}', { env: { AML_TEST_MCP_HTTP: "1" } }, <Tool use={echo} />)
    const seen = JSON.parse(await result)
    expect(seen.tools).toEqual(["echo"])
    expect(seen.result.content[0].text).toBe("echo: hi")
    // The agent was given the relay's guest URL with the bridge's name and token.
    const served = contexts[0]!.mcpServers.at(-1) as any
    expect(served.name).toBe(contexts[0]!.amlMcpServerName)
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(served.headers[0].value).toMatch(/^Bearer [0-9a-f-]{36}$/)
    // Two guest processes: the relay (`node relay.cjs`, started first) and the agent.
    expect(spawned.map((entry) => entry.command)).toEqual(["node", process.execPath])
    expect(spawned[0]!.args).toHaveLength(1)
    expect(spawned[0]!.args[0]).toMatch(RELAY_PATH)
    for (const entry of spawned) expect(exists(pidOf(entry.id))).toBe(false)
    expect(existsSync(spawned[0]!.args[0]!.replace(/\/relay\.cjs$/, ""))).toBe(false)
    expect([liveAcpRelays(), liveAcpBridges(), liveAcpSessions()]).toEqual([0, 0, 0])
  })

  it("carries structured submissions (invalid, then valid) through the relay", async () => {
    const { provider, spawned } = netnsSandbox(workspace)
    const submissions = JSON.stringify([{ result: { n: "x" } }, { result: { n: 3 } }])
    const schema = z.object({ n: z.number() })
    const { result } = run(provider, `submit ${submissions}`, { env: { AML_TEST_MCP_HTTP: "1" } }, undefined, schema)
    expect(await result).toEqual({ n: 3 })
    expect(spawned[0]!.args[0]).toMatch(RELAY_PATH)
    for (const entry of spawned) expect(exists(pidOf(entry.id))).toBe(false)
    expect(liveAcpRelays()).toBe(0)
  })

  it("a relay process that announces nothing valid is killed and reaped", async () => {
    const { provider, spawned } = netnsSandbox(workspace)
    const wrapped = replaceRelay(provider, ["sh", ["-c", "echo not-a-frame; exec sleep 1000"]])
    const error = await rejection(run(wrapped, "x", {}, <Tool use={echo} />).result)
    expect(error.cause.constructor).toBe(Error)
    expect(error.cause.message).toBe("Sandbox MCP relay emitted an invalid readiness message")
    expect(spawned.map((entry) => entry.command)).toEqual(["sh"])
    expect(exists(pidOf(spawned[0]!.id))).toBe(false)
    expect([liveAcpRelays(), liveAcpBridges(), liveAcpSessions()]).toEqual([0, 0, 0])
  })

  it("a relay process that dies before it is ready reports its stderr", async () => {
    const { provider, spawned } = netnsSandbox(workspace)
    const wrapped = replaceRelay(provider, ["sh", ["-c", "echo 'relay: cannot listen' >&2; exit 3"]])
    const error = await rejection(run(wrapped, "x", {}, <Tool use={echo} />).result)
    expect(error.cause.constructor).toBe(Error)
    expect(error.cause.message).toBe("Sandbox MCP relay failed: relay: cannot listen")
    expect(exists(pidOf(spawned[0]!.id))).toBe(false)
    expect(liveAcpRelays()).toBe(0)
  })
})

/** Runs `replacement` wherever the launcher starts relay.cjs. */
function replaceRelay(provider: any, [command, args]: [string, string[]]) {
  return {
    name: "replaced-relay",
    async acquire(request: any) {
      const lease = await provider.acquire(request)
      const runtime = lease.runtime
      return {
        ...lease,
        release: () => lease.release(),
        runtime: {
          ...runtime,
          exec: runtime.exec,
          spawn: (c: string, a: string[] = [], options?: any) =>
            c === "node" && RELAY_PATH.test(a[0] ?? "") ? runtime.spawn(command, args, options) : runtime.spawn(c, a, options),
        },
      }
    },
  }
}

/** A SandboxProcess that writes `stdout`/`stderr`, then exits with `code` (or runs until killed). */
function fakeProcess(stdout: string, stderr: string, code: number | undefined) {
  const encoder = new TextEncoder()
  let kills = 0
  let finish!: (value: { exitCode: number }) => void
  const exited = new Promise<{ exitCode: number }>((resolve) => (finish = resolve))
  const controllers: ReadableStreamDefaultController[] = []
  const stream = (text: string) =>
    new ReadableStream({
      start(controller) {
        if (text !== "") controller.enqueue(encoder.encode(text))
        if (code !== undefined) controller.close()
        else controllers.push(controller)
      },
    })
  if (code !== undefined) finish({ exitCode: code })
  const process = {
    id: "deterministic-process:relay",
    kill: async () => {
      kills += 1
      for (const controller of controllers) controller.close()
      finish({ exitCode: 137 })
    },
    stderr: stream(stderr),
    stdin: new WritableStream(),
    stdout: stream(stdout),
    wait: () => exited,
  }
  return { kills: () => kills, process }
}

describe("Sandbox MCP relay failures (DeterministicSandboxProvider)", () => {
  const deterministic = (fake: ReturnType<typeof fakeProcess>, started: string[][]) =>
    new DeterministicSandboxProvider({
      spawn: (command: string, args: string[]) => {
        started.push([command, ...args])
        return fake.process
      },
    })

  it("an invalid readiness message fails the Agent and the relay is killed", async () => {
    for (const line of ['{"kind":"ready"}\n', '{"kind":"ready","port":0}\n', '{"kind":"started","port":4000}\n', "hello\n"]) {
      const fake = fakeProcess(line, "", undefined)
      const started: string[][] = []
      const error = await rejection(run(deterministic(fake, started), "x", {}, <Tool use={echo} />).result)
      expect(error.cause.constructor).toBe(Error)
      expect(error.cause.message).toBe("Sandbox MCP relay emitted an invalid readiness message")
      expect(started).toHaveLength(1)
      expect(started[0]![0]).toBe("node")
      expect(started[0]![1]).toMatch(RELAY_PATH)
      expect(fake.kills()).toBe(1)
    }
    expect([liveAcpRelays(), liveAcpBridges(), liveAcpSessions()]).toEqual([0, 0, 0])
  })

  it("a relay that exits before readiness is `Sandbox MCP relay failed: <stderr>`", async () => {
    const fake = fakeProcess("", "node: not found\n", 127)
    const error = await rejection(run(deterministic(fake, []), "x", {}, <Tool use={echo} />).result)
    expect(error.cause.constructor).toBe(Error)
    expect(error.cause.message).toBe("Sandbox MCP relay failed: node: not found")
    const silent = fakeProcess("", "", 127)
    const quiet = await rejection(run(deterministic(silent, []), "x", {}, <Tool use={echo} />).result)
    expect(quiet.cause.message).toBe("Sandbox MCP relay failed: exit code 127")
    expect(liveAcpRelays()).toBe(0)
  })

  it("no relay without Tools or structured output", async () => {
    const started: string[][] = []
    const provider = new DeterministicSandboxProvider({
      spawn: (command: string, args: string[]) => {
        started.push([command, ...args])
        return fakeProcess("", "", 0).process
      },
    })
    await rejection(run(provider, "x", {}).result)
    expect(started.map((entry) => entry[0])).toEqual([process.execPath])
  })
})
