// Helpers for the process specs: temporary directories, pid files a shell tree writes, and
// checks that processes are really gone (kill(pid, 0) fails with ESRCH: no process and no
// zombie left behind).
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { delay } from "./async.js"

export function tempDir(prefix = "aml-process-"): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { force: true, recursive: true }) }
}

/** Whether `pid` still names a process or an unreaped zombie. */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error: any) {
    if (error.code === "ESRCH") return false
    throw error
  }
}

/** Asserts that every pid is gone now: `process.kill(pid, 0)` throws ESRCH. */
export function expectAllGoneNow(pids: number[]): void {
  const alive = pids.filter(exists)
  if (alive.length > 0) throw new Error(`still present (alive or zombie): ${alive.join(", ")}`)
}

/** Polls until every pid is gone; fails after `withinMs` (a hang guard, not a timing claim). */
export async function expectAllGone(pids: number[], withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs
  while (pids.some(exists)) {
    if (Date.now() > deadline) expectAllGoneNow(pids)
    await delay(5)
  }
}

function pidLines(text: string): number[] {
  return text
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => Number.parseInt(line, 10))
}

/** Polls `file` until it holds `count` pid lines (`withinMs` is a hang guard). */
export async function readPidFile(file: string, count: number, withinMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + withinMs
  for (;;) {
    let pids: number[] = []
    try {
      pids = pidLines(readFileSync(file, "utf8"))
    } catch {
      // Not created yet.
    }
    if (pids.length >= count) return pids
    if (Date.now() > deadline) throw new Error(`${file} has ${pids.length} of ${count} pids`)
    await delay(5)
  }
}

/** Reads a byte stream until `count` pid lines arrived (the reader is released after). */
export async function readPidLines(stream: ReadableStream<Uint8Array>, count: number): Promise<number[]> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    while (text.split("\n").length - 1 < count) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`stream ended after ${text.split("\n").length - 1} of ${count} pid lines`)
      text += decoder.decode(value, { stream: true })
    }
  } finally {
    reader.releaseLock()
  }
  return pidLines(text)
}

/**
 * A 3-level tree: the leader shell starts two shells, each of which starts five `sleep`
 * grandchildren. Every pid (grandchildren and the middle shells, 12 lines) is appended to
 * `$1`, or printed when no file is given.
 */
export function treeScript(pidFile?: string): string {
  const sink = pidFile === undefined ? "" : ` >> ${JSON.stringify(pidFile)}`
  const inner = `for j in 1 2 3 4 5; do sleep 300 & echo $!${sink}; done; echo $$${sink}; wait`
  return `for i in 1 2; do sh -c '${inner}' & done; wait`
}

/** Pids in a tree script's output: 10 sleeps and 2 middle shells. */
export const TREE_PIDS = 12
