// A process in a remote Sandbox (Daytona session command, Modal exec) as a SandboxProcess.
// It runs under a marker wrapper that records its process group (read from /proc, because a
// remote session shell, unlike `docker exec`, may lead the group itself) and execs the
// command, so kill() can end the group with a second command (`kill -KILL -- -<pgid>`); stdout and stderr
// share the `maxOutputBytes` budget (`<label> process output exceeded <n> bytes`); writes
// after stdin was closed, or after wait() reported the end, fail with
// `<label> process input is closed`.

import { randomUUID } from "node:crypto"

import { stopWhen } from "../../process/stop-when.js"
import { groupMarker, recordGroupArgv } from "../guest-group.js"

function bounded(source, budget, onOverflow) {
  const reader = source.getReader()
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) return controller.close()
      const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value
      budget.used += bytes.byteLength
      if (budget.used > budget.max) {
        controller.error(budget.error)
        onOverflow()
        return
      }
      controller.enqueue(bytes)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}

export async function remoteProcess(adapter, sandbox, prepared, config, killMarker) {
  const label = adapter.label
  const signal = prepared.options.signal
  if (signal?.aborted) throw signal.reason
  const marker = groupMarker()
  const argv = recordGroupArgv(marker, prepared.argv)
  const child = await adapter.spawn(sandbox, argv, prepared.options)
  let killing
  const kill = () => (killing ??= Promise.resolve(killMarker(marker)).then(() => undefined))
  const budget = {
    used: 0,
    max: config.maxOutputBytes,
    error: new RangeError(`${label} process output exceeded ${config.maxOutputBytes} bytes`),
  }
  const overflow = () => kill().catch(() => {})
  let closed = false
  const stdin = new WritableStream({
    async write(chunk) {
      if (closed) throw new Error(`${label} process input is closed`)
      await child.stdin.write(chunk)
    },
    async close() {
      closed = true
      await child.stdin.close()
    },
    async abort() {
      closed = true
      await child.stdin.close()
    },
  })
  const disarm = stopWhen(signal, prepared.options.timeoutMs, () => kill().catch(() => {}))
  const settled = Promise.resolve(child.wait()).then(
    (exitCode) => ({ exitCode }),
    (error) => ({ error }),
  )
  settled.then(disarm)
  let waiting
  const process = {
    id: `${adapter.kind}-process:${randomUUID()}`,
    stdin,
    stdout: bounded(child.stdout, budget, overflow),
    stderr: bounded(child.stderr, budget, overflow),
    kill,
    wait() {
      waiting ??= settled.then(({ error, exitCode }) => {
        // Once wait() has reported the end, the process reads nothing more: later writes
        // get the documented error. Not earlier, on the SDK's own exit notice: that arrives
        // asynchronously, so a write issued right after spawn() would pass or fail by timing.
        closed = true
        if (signal?.aborted) throw signal.reason
        if (error !== undefined) throw error
        if (!Number.isInteger(exitCode)) throw new Error(`${label} process completed without an exit code`)
        return Object.freeze({ exitCode })
      })
      return waiting
    },
  }
  return Object.freeze(process)
}
