// spawnLocalProcess (INVENTORY PA-8): spawn errors, the environment, Web streams in both
// directions, memoised wait(), idempotent kill() with beforeKill, abort and timeout.
import { describe, expect, test } from "vitest"

import { spawnLocalProcess } from "@aml-jsx/sdk"

import { liveProcesses } from "../lib/core/native.js"
import { cleanupFailure } from "../lib/process/local-process.js"
import { delay } from "./support/async.js"
import { exists, expectAllGone, expectAllGoneNow, tempDir } from "./support/processes.js"

const signal = () => new AbortController().signal

function spawnSh(script: string, options: Record<string, unknown> = {}) {
  return spawnLocalProcess("sh", ["-c", script], { cwd: process.cwd(), signal: signal(), ...options } as any)
}

async function bytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text()
}

describe("starting", () => {
  test("an aborted signal rejects with its reason before anything is spawned", async () => {
    const controller = new AbortController()
    const reason = new Error("no thanks")
    controller.abort(reason)
    const before = liveProcesses()
    await expect(spawnLocalProcess("true", [], { cwd: "/", signal: controller.signal })).rejects.toBe(reason)
    expect(liveProcesses()).toBe(before)
  })

  test("a missing command rejects with Node's spawn error shape", async () => {
    const error: any = await spawnLocalProcess("aml-no-such-command", ["x"], { cwd: "/", signal: signal() }).catch(
      (e) => e,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toBe("spawn aml-no-such-command ENOENT")
    expect(error).toMatchObject({
      code: "ENOENT",
      errno: -2,
      path: "aml-no-such-command",
      spawnargs: ["x"],
      syscall: "spawn aml-no-such-command",
    })
  })

  test("a missing cwd says so", async () => {
    const error: any = await spawnLocalProcess("true", [], { cwd: "/aml/missing/dir", signal: signal() }).catch(
      (e) => e,
    )
    expect(error.message).toBe('spawn true ENOENT: cwd "/aml/missing/dir" does not exist')
    expect(error.code).toBe("ENOENT")
  })

  test("id, cwd and env = {...process.env, ...env, PWD: cwd}", async () => {
    const dir = tempDir()
    process.env.AML_LOCAL_INHERITED = "inherited"
    try {
      const child = await spawnSh('printf "%s|%s|%s|%s" "$AML_LOCAL_INHERITED" "$AML_EXTRA" "$PWD" "$(pwd -P)"', {
        cwd: dir.path,
        env: { AML_EXTRA: "extra", PWD: "/ignored" },
      })
      expect(child.id).toMatch(/^local-process:\d+$/)
      expect(Object.isFrozen(child)).toBe(true)
      expect(await text(child.stdout)).toBe(`inherited|extra|${dir.path}|${dir.path}`)
      expect(await child.wait()).toEqual({ exitCode: 0 })
    } finally {
      delete process.env.AML_LOCAL_INHERITED
      dir.remove()
    }
  })
})

describe("streams", () => {
  test("stdin in, stdout and stderr out, byte-exact and non-UTF-8 safe", async () => {
    const child = await spawnSh("cat; printf '\\377\\000\\376' >&2")
    const writer = child.stdin.getWriter()
    const payload = new Uint8Array([0, 1, 2, 255, 254, 10])
    await writer.write(payload)
    await writer.close()
    const [out, err] = await Promise.all([bytes(child.stdout), bytes(child.stderr)])
    expect([...out]).toEqual([...payload])
    expect([...err]).toEqual([255, 0, 254])
    expect(await child.wait()).toEqual({ exitCode: 0 })
  })

  test("chunks are plain Uint8Arrays and large output arrives intact", async () => {
    const child = await spawnSh("head -c 10000000 /dev/zero")
    const reader = child.stdout.getReader()
    let total = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      expect(value.constructor).toBe(Uint8Array)
      total += value.byteLength
    }
    expect(total).toBe(10_000_000)
    await child.wait()
  })

  test("stdin rejects non-byte chunks", async () => {
    const child = await spawnSh("cat >/dev/null")
    const writer = child.stdin.getWriter()
    await expect(writer.write("text" as any)).rejects.toThrow("Local process stdin accepts only Uint8Array chunks")
    await child.kill()
  })

  test("cancelling stdout closes the pipe: a writer gets SIGPIPE", async () => {
    const child = await spawnLocalProcess("yes", [], { cwd: "/", signal: signal() })
    const reader = child.stdout.getReader()
    await reader.read()
    await reader.cancel()
    await expect(child.wait()).rejects.toThrow("Local process exited from signal SIGPIPE")
  })

  test("aborting stdin interrupts a write the child never reads", async () => {
    const child = await spawnLocalProcess("sleep", ["30"], { cwd: "/", signal: signal() })
    const writer = child.stdin.getWriter()
    const pending = writer.write(new Uint8Array(1 << 20))
    await delay(50)
    await writer.abort(new Error("enough"))
    await expect(pending).rejects.toBeDefined()
    await child.kill()
  })

  test("writing after the child exited rejects", async () => {
    const child = await spawnLocalProcess("true", [], { cwd: "/", signal: signal() })
    await child.wait()
    const writer = child.stdin.getWriter()
    await expect(writer.write(new Uint8Array(70_000))).rejects.toBeDefined()
  })
})

describe("wait() and kill()", () => {
  test("wait() is memoised and frozen", async () => {
    const child = await spawnSh("exit 3")
    const first = child.wait()
    expect(child.wait()).toBe(first)
    const exit = await first
    expect(exit).toEqual({ exitCode: 3 })
    expect(Object.isFrozen(exit)).toBe(true)
  })

  test("kill() runs beforeKill once, first, then kills; every call shares one promise", async () => {
    const order: string[] = []
    const child = await spawnLocalProcess("sleep", ["30"], {
      beforeKill: async () => {
        order.push(`beforeKill alive=${exists(Number(child.id.split(":")[1]))}`)
      },
      cwd: "/",
      signal: signal(),
    })
    const first = child.kill()
    expect(child.kill()).toBe(first)
    await first
    await child.kill()
    expect(order).toEqual(["beforeKill alive=true"])
    await expect(child.wait()).rejects.toThrow("Local process exited from signal SIGTERM")
    expectAllGoneNow([Number(child.id.split(":")[1])])
  })

  test("a beforeKill failure rejects kill(), and the process is killed anyway", async () => {
    const failure = new Error("beforeKill failed")
    const child = await spawnLocalProcess("sleep", ["30"], {
      beforeKill: () => {
        throw failure
      },
      cwd: "/",
      signal: signal(),
    })
    await expect(child.kill()).rejects.toBe(failure)
    expectAllGoneNow([Number(child.id.split(":")[1])])
  })

  test("several cleanup failures combine as AggregateError('Process cleanup failed')", () => {
    const a = new Error("a")
    const b = new Error("b")
    expect(() => cleanupFailure([])).not.toThrow()
    expect(() => cleanupFailure([a])).toThrow(a)
    try {
      cleanupFailure([a, b])
      expect.unreachable()
    } catch (error: any) {
      expect(error).toBeInstanceOf(AggregateError)
      expect(error.message).toBe("Process cleanup failed")
      expect(error.errors).toEqual([a, b])
    }
  })

  test("kill() after a natural exit resolves", async () => {
    const child = await spawnSh("echo done")
    expect(await text(child.stdout)).toBe("done\n")
    await child.wait()
    await child.kill()
    await child.kill()
  })

  test("an abort kills the process (beforeKill included) and wait() rejects with the reason", async () => {
    const controller = new AbortController()
    let beforeKill = 0
    const child = await spawnLocalProcess("sleep", ["30"], {
      beforeKill: () => void beforeKill++,
      cwd: "/",
      signal: controller.signal,
    })
    const reason = new Error("stop")
    controller.abort(reason)
    await expect(child.wait()).rejects.toBe(reason)
    expect(beforeKill).toBe(1)
    await child.kill()
    expectAllGoneNow([Number(child.id.split(":")[1])])
  })

  test("timeoutMs kills the process", async () => {
    const started = Date.now()
    const child = await spawnLocalProcess("sleep", ["30"], { cwd: "/", signal: signal(), timeoutMs: 100 })
    await expect(child.wait()).rejects.toThrow("Local process exited from signal SIGTERM")
    expect(Date.now() - started).toBeLessThan(20_000) // far below the sleep: the timeout, not the sleep, ended it
  })
})

describe("handles", () => {
  test("background jobs left in the group are torn down once the leader and its output ended", async () => {
    const child = await spawnSh("sleep 30 >/dev/null 2>&1 & echo $!")
    const pid = Number((await text(child.stdout)).trim())
    expect(await child.wait()).toEqual({ exitCode: 0 })
    await text(child.stderr)
    await expectAllGone([pid])
  })
})
