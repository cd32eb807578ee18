// The Sandbox MCP relay against a real Docker daemon: dockerSandbox() with a local image that
// has `node` (this host's binary, __test__/support/docker-node-image.ts), on a private daemon
// without a bridge network, so the container has only its own loopback and cannot reach the
// host's bridge. The scripted ACP agent (bundled into one file with esbuild, since the
// container has no node_modules) calls a JS Tool and submits structured output through
// relay.cjs; before the lease is released, no relay process is left in the container.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { build } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"

import { Agent, AmlRuntime, Sandbox, Tool, defineTool, dockerSandbox, evaluate } from "@aml-jsx/sdk"

import { liveAcpBridges, liveAcpRelays, liveAcpSessions } from "../lib/core/native.js"
import { SCRIPTED_AGENT, scriptedAcp } from "./support/acp.js"
import { NODE_IMAGE, buildNodeImage } from "./support/docker-node-image.js"
import { dockerdAvailable, startPrivateDaemon, type PrivateDaemon } from "./support/private-dockerd.js"
import { hasGroup, titleNeeding } from "./support/test-groups.js"

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "aml-acp-docker-relay-")))
let daemon: PrivateDaemon | undefined
const previousHost = process.env.DOCKER_HOST
const privateDockerd = hasGroup("root") && dockerdAvailable()

beforeAll(async () => {
  if (!privateDockerd) return
  mkdirSync(join(workspace, "repo"), { recursive: true })
  await build({ bundle: true, entryPoints: [SCRIPTED_AGENT], format: "cjs", logLevel: "error", outfile: join(workspace, "repo", "agent.cjs"), platform: "node" })
  daemon = await startPrivateDaemon()
  buildNodeImage(daemon.docker)
  // dockerSandbox() reads DOCKER_HOST at each acquisition; this fork only.
  process.env.DOCKER_HOST = daemon.host
  // Agents stopped here get 300 ms to honour a cancel and to exit (docs/ACP.md, settings).
  process.env.AML_ACP_CANCEL_GRACE_MS = "300"
  process.env.AML_ACP_KILL_GRACE_MS = "300"
}, 300_000)

afterAll(async () => {
  delete process.env.AML_ACP_CANCEL_GRACE_MS
  delete process.env.AML_ACP_KILL_GRACE_MS
  if (previousHost === undefined) delete process.env.DOCKER_HOST
  else process.env.DOCKER_HOST = previousHost
  await daemon?.stop()
  rmSync(workspace, { force: true, recursive: true })
}, 60_000)

const echo = defineTool({
  description: "Echoes",
  execute: ({ text }: { text: string }) => `echo: ${text}`,
  input: z.object({ text: z.string() }),
  name: "echo",
})

/** dockerSandbox() whose releases first record `ps` inside the container. */
function recordingDocker() {
  const docker = dockerSandbox({ image: NODE_IMAGE, workspace })
  const listings: string[] = []
  const spawned: string[][] = []
  const provider = {
    name: "docker",
    async acquire(request: any) {
      const lease = await docker.acquire(request)
      const runtime = lease.runtime
      return {
        handle: lease.handle,
        id: lease.id,
        async release() {
          const ps = await runtime.exec("ps", ["-o", "pid,args"], { cwd: runtime.cwd, signal: new AbortController().signal })
          listings.push(ps.stdout)
          await lease.release()
        },
        runtime: {
          access: runtime.access,
          cwd: runtime.cwd,
          exec: (command: string, args?: string[], options?: any) => runtime.exec(command, args, options),
          root: runtime.root,
          spawn(command: string, args: string[] = [], options?: any) {
            spawned.push([command, ...args])
            return runtime.spawn(command, args, options)
          },
        },
      }
    },
  }
  return { listings, provider, spawned }
}

function run(provider: any, text: string, children?: any, schema?: any) {
  const { contexts, provider: agentProvider } = scriptedAcp({ args: ["/workspace/agent.cjs"], command: "node", env: { AML_TEST_MCP_HTTP: "1" } })
  const runtime = new AmlRuntime({ agentProvider, sandboxProvider: provider })
  const tree = (
    <Sandbox access="read-write" root="repo">
      <Agent>
        {children}
        {text}
      </Agent>
    </Sandbox>
  )
  const Probe = async () => JSON.stringify(await evaluate(tree, schema))
  const result = schema === undefined ? runtime.evaluate(tree) : runtime.evaluate(<Probe />).then(JSON.parse)
  return { contexts, result }
}

// Needs root (a private dockerd): skipped, and named so (scripts/test-groups.js), without it.
describe.skipIf(!privateDockerd)(titleNeeding("Sandbox MCP relay in a Docker Sandbox (real daemon, no bridge network)", privateDockerd, "root"), () => {
  it("the container cannot reach the host's loopback bridge; Tools and structured output go through the relay", async () => {
    const { listings, provider, spawned } = recordingDocker()
    const { contexts, result } = run(provider, 'call-tool echo {"text":"from docker"}', <Tool use={echo} />)
    const seen = JSON.parse(await result)
    expect(seen.tools).toEqual(["echo"])
    expect(seen.result.content[0].text).toBe("echo: from docker")
    expect(spawned.map((entry) => entry[0])).toEqual(["node", "node"])
    expect(spawned[0]![1]).toMatch(/^\/tmp\/aml-mcp-relay-[0-9a-f-]{36}\/relay\.cjs$/)
    const guestUrl = (contexts[0]!.mcpServers.at(-1) as any).url
    expect(guestUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    // At release, neither the relay nor the agent is running in the container any more.
    expect(listings).toHaveLength(1)
    expect(listings[0]).toMatch(/^PID +COMMAND\n +1 sh /)
    expect(listings[0]).not.toContain("relay.cjs")
    expect(listings[0]).not.toContain("agent.cjs")

    const structured = recordingDocker()
    const submissions = JSON.stringify([{ result: { n: "x" } }, { result: { n: 5 } }])
    expect(await run(structured.provider, `submit ${submissions}`, undefined, z.object({ n: z.number() })).result).toEqual({ n: 5 })
    expect(structured.listings[0]).not.toContain("relay.cjs")
    expect([liveAcpRelays(), liveAcpBridges(), liveAcpSessions()]).toEqual([0, 0, 0])
    expect(daemon!.docker(["ps", "-aq"]).trim()).toBe("")
  }, 120_000)

  it("the host bridge itself is unreachable from the container", async () => {
    const docker = dockerSandbox({ image: NODE_IMAGE, workspace })
    const server = (await import("node:http")).createServer((_, response) => response.end("host"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as any).port
    const lease = await docker.acquire({ access: "read-write", cwd: ".", evaluationId: "probe", root: ".", signal: new AbortController().signal })
    try {
      const probe = `require("net").connect(${port}, "127.0.0.1").on("connect", () => { console.log("connected"); process.exit(0) }).on("error", (e) => { console.log(e.code); process.exit(0) })`
      const result = await lease.runtime.exec("node", ["-e", probe], { signal: new AbortController().signal })
      expect(result.stdout.trim()).toBe("ECONNREFUSED")
    } finally {
      await lease.release()
      server.close()
    }
  }, 60_000)
})
