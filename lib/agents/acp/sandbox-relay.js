// The Sandbox MCP relay's launch (INVENTORY BA-0 "Sandbox relay"): for a guest that cannot
// reach the host's loopback, relay.cjs (lib/agents/acp/mcp-relay.cjs) is materialised in
// /tmp/aml-mcp-relay-<uuid>/ and started with `node` through the lease's runtime; the
// native side (src/acp/relay.rs over crates/aml-acp/src/relay.rs) reads its frames and
// routes them through the bridge. The agent gets the bridge's descriptor with the relay's
// guest URL; the bearer token is unchanged and still checked by the bridge.

import { readFileSync } from "node:fs"
import { randomUUID } from "node:crypto"

import { materializeGuestFiles, removeGuestState } from "./sandbox-launch.js"
import { pumpSandboxProcess } from "./sandbox-process.js"
import { acpKillGraceMs, acpRelayClose, acpRelayOpen, acpRelayReady } from "../../core/native.js"

// Read on first use, not at import (cold start), and found from the package root: this
// module also runs from the CLI's SDK bundle in dist/ (scripts/bundle-sdk.js), one level
// below the root like lib/.
const RELAY_SCRIPT = new URL("./mcp-relay.cjs", import.meta.url)
let relaySource

function relayScript() {
  relaySource ??= readFileSync(RELAY_SCRIPT, "utf8")
  return relaySource
}

const detail = (result) => (result.stderr.trim() === "" ? `exit code ${result.exitCode}` : result.stderr.trim())

/** Resolves with `promise`, or rejects with the abort reason as soon as `signal` aborts. */
function raced(promise, signal) {
  if (signal.aborted) return Promise.reject(signal.reason)
  let onAbort
  const aborted = new Promise((_, reject) => {
    onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
  })
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort))
}

function settledWithin(promise, ms) {
  let timer
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, ms)
    timer.unref?.()
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * Starts the relay for `bridge` in `sandbox`. Resolves `{ descriptor, close }`: the guest's
 * MCP descriptor of the bridge, and `close()` resolving with cleanup failure messages.
 */
export async function startSandboxRelay(name, sandbox, bridge, signal) {
  const runtime = sandbox.lease.runtime
  const directory = `/tmp/aml-mcp-relay-${randomUUID()}`
  const owned = new AbortController()
  let key
  let pump
  let made = false
  const close = async () => {
    const failures = key === undefined ? [] : await acpRelayClose(key)
    if (pump !== undefined) {
      // Bounded: a supervisor whose kill failed may leave the streams open.
      await settledWithin(pump.done, acpKillGraceMs() + 5000)
      failures.push(...pump.killErrors.map((error) => `Sandbox MCP relay failed: ${error?.message ?? String(error)}`))
    }
    owned.abort()
    if (made) failures.push(...(await removeGuestState(name, sandbox, directory)))
    return failures
  }
  try {
    const mkdir = await runtime.exec("mkdir", ["-p", "-m", "700", "--", directory], { cwd: sandbox.cwd, signal })
    if (mkdir.exitCode !== 0) throw new Error(`Sandbox MCP relay failed: ${detail(mkdir)}`)
    made = true
    await materializeGuestFiles(sandbox, directory, [{ content: relayScript(), executable: false, path: "relay.cjs" }], signal)
    let child
    try {
      child = await runtime.spawn("node", [`${directory}/relay.cjs`], { cwd: sandbox.cwd, env: {}, signal: owned.signal })
    } catch (error) {
      throw new Error(`Sandbox MCP relay failed: ${error?.message ?? String(error)}`, { cause: error })
    }
    key = acpRelayOpen(bridge.handle, child.id)
    pump = pumpSandboxProcess(key, child)
    const port = await raced(acpRelayReady(key), signal)
    const descriptor = { ...bridge.descriptor, url: `http://127.0.0.1:${port}/mcp` }
    return { close, descriptor }
  } catch (error) {
    const failures = await close()
    if (failures.length > 0) {
      throw new AggregateError([error, ...failures.map((message) => new Error(message))], `Agent provider "${name}" ACP session cleanup failed`)
    }
    throw error
  }
}
