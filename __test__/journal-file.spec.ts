// The file journal (docs/JOURNAL.md, crates/aml-journal): a workflow killed with SIGKILL
// between Agents is completed by a second process that calls only the unsettled Agents; a
// torn last record is ignored; another workflow's file is refused with a clear error.
import { spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

import { afterAll, describe, expect, it } from "vitest"

import { Agent, AmlRuntime, createFileJournal } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))
const root = mkdtempSync(join(tmpdir(), "aml-journal-"))

afterAll(() => rmSync(root, { force: true, recursive: true }))

// Six sequential Agents, each prompt built from the previous answer. The provider logs every
// call; the Agent named by HANG writes a marker and never answers (the process is killed).
const script = `
import { appendFileSync, writeFileSync } from "node:fs"
import { Agent, AmlRuntime, createFileJournal, evaluate } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
const [journalPath, log, marker, hang] = process.argv.slice(1)
const provider = {
  name: "p",
  async run(request) {
    appendFileSync(log, request.prompt + "\\n")
    if (request.prompt.startsWith(hang + " ")) {
      setInterval(() => {}, 1000)
      writeFileSync(marker, "started")
      return new Promise(() => {})
    }
    return { text: request.prompt.toUpperCase() }
  },
}
async function Chain() {
  let previous = ""
  for (let i = 1; i <= 6; i++) previous = await evaluate(jsx(Agent, { children: "a" + i + " " + previous.length }))
  return previous
}
const journal = createFileJournal(journalPath, { workflow: "chain-1" })
const text = await new AmlRuntime({ agentProvider: provider }).evaluate(jsx(Chain, {}), { journal })
console.log(JSON.stringify({ repaired: journal.repaired, text }))
`

function run(args: string[]) {
  const child = spawn(process.execPath, ["--input-type=module", "--eval", script, ...args], { stdio: ["ignore", "pipe", "inherit"] })
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
    // Generous hang guard only: the test synchronises on the marker file, never on time.
    const guard = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("exit", (code, signal) => {
      clearTimeout(guard)
      resolve({ code, signal, stdout })
    })
  })
  return { child, exited }
}

async function waitFor(path: string, exited: Promise<unknown>) {
  let done = false
  void exited.then(() => (done = true))
  while (!existsSync(path)) {
    if (done) throw new Error("the child exited before writing its marker")
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const lines = (path: string) => readFileSync(path, "utf8").trim().split("\n")

describe("a workflow killed with SIGKILL between Agents", () => {
  it("is completed by a second process calling only the Agents that had not settled", async () => {
    const journalPath = join(root, "chain.journal")
    const log = join(root, "calls.log")
    const marker = join(root, "marker")
    writeFileSync(log, "")
    const first = run([journalPath, log, marker, "a4"])
    await waitFor(marker, first.exited)
    first.child.kill("SIGKILL")
    expect((await first.exited).signal).toBe("SIGKILL")
    expect(lines(log).map((line) => line.split(" ")[0])).toEqual(["a1", "a2", "a3", "a4"])
    // Three settled Agents, one record each after the header.
    expect(lines(journalPath)).toHaveLength(4)
    // A crash in the middle of the next write leaves a torn tail; reopening ignores it.
    appendFileSync(journalPath, '{"digest":"x","key":"agent:')

    writeFileSync(log, "")
    const second = run([journalPath, log, join(root, "unused"), "none"])
    const result = await second.exited
    expect(result.code).toBe(0)
    expect(lines(log).map((line) => line.split(" ")[0])).toEqual(["a4", "a5", "a6"])
    const uninterrupted = { repaired: true, text: "A6 4" }
    expect(JSON.parse(result.stdout)).toEqual(uninterrupted)
    expect(lines(journalPath)).toHaveLength(7)
  }, 60_000)
})

describe("createFileJournal", () => {
  const provider = { name: "p", run: async (request: any) => ({ text: `${request.prompt}!` }) }

  it("replays from a reopened file in the same process", async () => {
    const path = join(root, "same.journal")
    const calls: string[] = []
    const counting = { name: "p", run: async (request: any) => (calls.push(request.prompt), { text: request.prompt }) }
    const runtime = new AmlRuntime({ agentProvider: counting })
    const tree = [jsx(Agent, { children: "x" }), jsx(Agent, { children: "y" })]
    await runtime.evaluate(tree, { journal: createFileJournal(path, { workflow: "w" }) })
    const reopened = createFileJournal(path, { workflow: "w" })
    expect(reopened.entries().map((e) => e.kind)).toEqual(["agent", "agent"])
    expect(reopened.repaired).toBe(false)
    await expect(runtime.evaluate(tree, { journal: reopened })).resolves.toBe("xy")
    expect(calls).toEqual(["x", "y"])
  })

  it("refuses a file that belongs to another workflow, with a clear message", async () => {
    const path = join(root, "owned.journal")
    await new AmlRuntime({ agentProvider: provider }).evaluate(jsx(Agent, { children: "x" }), {
      journal: createFileJournal(path, { workflow: "order-17" }),
    })
    let error: any
    try {
      createFileJournal(path, { workflow: "order-18" })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(Error)
    expect(error.constructor).toBe(Error)
    expect(error.message).toBe(`AML journal "${path}" belongs to workflow "order-17", not "order-18"`)
  })

  it("refuses a file that is not a journal and checks its arguments", () => {
    const path = join(root, "notes.txt")
    writeFileSync(path, "shopping list\nmilk\n")
    expect(() => createFileJournal(path, { workflow: "w" })).toThrow(new Error(`AML journal "${path}" is not an AML journal file`))
    expect(() => createFileJournal("", { workflow: "w" })).toThrow(new TypeError("File journal path must be a non-empty string"))
    expect(() => createFileJournal(path, null as any)).toThrow(new TypeError("File journal options must be an object"))
    expect(() => createFileJournal(path, { workflow: " w" })).toThrow(
      new TypeError("File journal workflow must be a non-empty normalized string"),
    )
  })
})
