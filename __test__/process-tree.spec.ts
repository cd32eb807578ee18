// Process-tree safety for both host paths: a cancelled <Script> and a killed
// spawnLocalProcess leave nothing of a 3-level tree behind — no process and no zombie
// (process.kill(pid, 0) throws ESRCH) — by the time the evaluation rejects or kill()/wait()
// resolve; a tree that ignores SIGTERM is SIGKILLed after the 2 s grace period.
import { join } from "node:path"

import { afterAll, describe, expect, test } from "vitest"

import { AmlRuntime, Sandbox, Script, localSandbox, spawnLocalProcess } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

import { liveProcesses } from "../lib/core/native.js"
import { until } from "./support/async.js"
import { expectAllGone, expectAllGoneNow, readPidFile, readPidLines, tempDir, TREE_PIDS, treeScript } from "./support/processes.js"
import { underQemuUser } from "./support/emulation.js"

// Under qemu-user (no subreaper) each round also waits for PID 1 to reap the orphans, which it
// does every ~2 s here: fewer rounds keep the same assertions within the timeout.
const REPETITIONS = underQemuUser ? 10 : 100
const dir = tempDir("aml-tree-")
afterAll(() => dir.remove())

const pidOf = (id: string) => Number(id.slice("local-process:".length))

async function killedLocalTree(): Promise<number[]> {
  const child = await spawnLocalProcess("sh", ["-c", treeScript()], {
    cwd: dir.path,
    signal: new AbortController().signal,
  })
  const pids = [pidOf(child.id), ...(await readPidLines(child.stdout, TREE_PIDS))]
  expect(pids).toHaveLength(TREE_PIDS + 1)
  await child.kill()
  await expect(child.wait()).rejects.toThrow(/^Local process exited from signal SIG(TERM|KILL)$/)
  // Stronger than "within 2 s": kill() resolves only once every member is reaped.
  expectAllGoneNow(pids)
  await child.stdout.cancel()
  return pids
}

async function cancelledScriptTree(runtime: AmlRuntime, round: number): Promise<number[]> {
  const pidFile = join(dir.path, `script-${round}.pids`)
  const controller = new AbortController()
  const reason = new Error(`cancel ${round}`)
  const run = runtime.evaluate(jsx(Script, { children: treeScript(pidFile), shell: "sh" }), {
    signal: controller.signal,
  })
  const pids = await readPidFile(pidFile, TREE_PIDS)
  controller.abort(reason)
  await expect(run).rejects.toBe(reason)
  expectAllGoneNow(pids)
  return pids
}

describe(`${REPETITIONS} repetitions`, () => {
  test("spawnLocalProcess: kill() takes the whole tree down", async () => {
    const before = liveProcesses()
    for (let round = 0; round < REPETITIONS; round++) await expectAllGone(await killedLocalTree())
    await until(() => liveProcesses() === before, "every handle to be released")
  }, 120_000)

  test("<Script>: cancellation takes the whole tree down", async () => {
    const runtime = new AmlRuntime({ cwd: dir.path })
    for (let round = 0; round < REPETITIONS; round++) await expectAllGone(await cancelledScriptTree(runtime, round))
  }, 120_000)
})

describe("a tree that ignores SIGTERM", () => {
  // `trap "" TERM` is inherited by the sleeps: only SIGKILL ends any of them.
  const stubborn = (sink = "") => `trap "" TERM; for i in 1 2 3; do sleep 300 & echo $!${sink}; done; wait`

  test("spawnLocalProcess: kill() escalates to SIGKILL after the grace period", async () => {
    const child = await spawnLocalProcess("sh", ["-c", stubborn()], {
      cwd: dir.path,
      signal: new AbortController().signal,
    })
    const pids = [pidOf(child.id), ...(await readPidLines(child.stdout, 3))]
    // The grace period is a lower bound (SIGKILL is sent only after it); no upper bound
    // beyond the test timeout, which a loaded machine could otherwise miss.
    const started = performance.now()
    await child.kill()
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_900)
    await expect(child.wait()).rejects.toThrow("Local process exited from signal SIGKILL")
    expectAllGoneNow(pids)
  })

  test("<Script>: cancellation escalates to SIGKILL after the grace period", async () => {
    const pidFile = join(dir.path, "stubborn.pids")
    const runtime = new AmlRuntime({ cwd: dir.path })
    const controller = new AbortController()
    const run = runtime.evaluate(jsx(Script, { children: stubborn(` >> ${pidFile}`), shell: "sh" }), {
      signal: controller.signal,
    })
    const pids = await readPidFile(pidFile, 3)
    const started = performance.now()
    const reason = new Error("stop")
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_900)
    expectAllGoneNow(pids)
  })
})

test("cookbook 'Stop a CLI workflow safely': a cancelled Script in a local Sandbox leaves no child", async () => {
  const pidFile = join(dir.path, "cookbook.pid")
  const source = `
sleep 300 &
child=$!
printf '%s\\n' "$child" > ${JSON.stringify(pidFile)}
wait "$child"
`
  const tree = jsx(Sandbox, {
    access: "read-write",
    children: jsx(Script, { children: source, shell: "sh" }),
    provider: localSandbox({ workspace: dir.path }),
  })
  const controller = new AbortController()
  const run = new AmlRuntime().evaluate(tree, { signal: controller.signal })
  const [child] = await readPidFile(pidFile, 1)
  const reason = new Error("SIGINT")
  controller.abort(reason)
  await expect(run).rejects.toBe(reason)
  await expectAllGone([child!])
})
