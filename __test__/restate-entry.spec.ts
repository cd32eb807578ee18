// @aml-jsx/sdk/restate on the package's own Node (20 or newer): its options, Node and peer
// checks and the journal's failures, without a Restate server (restate-durable.spec.ts has one).
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http"
import { createServer } from "node:net"

import { describe, expect, it } from "vitest"

import { amlWorkflow, createRestateJournal } from "@aml-jsx/sdk/restate"
import { AmlRuntime } from "@aml-jsx/sdk"

import { checkNode, importPeer } from "../lib/durable/restate-sdk.js"
import { expectExact } from "./support/errors.js"

const valid = { name: "W", ingress: "http://127.0.0.1:1", runtime: new AmlRuntime(), render: () => "x" }

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (error: unknown) => error)
}

function thrown(make: () => unknown): unknown {
  try {
    make()
  } catch (error) {
    return error
  }
  return undefined
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })
}

describe("amlWorkflow", () => {
  it("checks its options before loading the SDK", async () => {
    const cases: [object, string][] = [
      [{ ...valid, name: "" }, "amlWorkflow name must be a non-empty string"],
      [{ ...valid, ingress: undefined }, "amlWorkflow ingress must be the Restate ingress URL"],
      [{ ...valid, render: "x" }, "amlWorkflow render must be a function from the input to an AML tree"],
      [{ ...valid, runtime: {} }, "amlWorkflow runtime must be an AmlRuntime or a function returning one"],
      [{ ...valid, journalName: "W" }, "amlWorkflow journalName must be a non-empty string other than the workflow's name"],
    ]
    for (const [options, message] of cases) expectExact(await rejection(amlWorkflow(options as never)), TypeError, message)
    expectExact(await rejection(amlWorkflow(null as never)), TypeError, "amlWorkflow options must be an object")
  })

  it("says which Node it needs", async () => {
    const message = (version: string) =>
      `@aml-jsx/sdk/restate needs Node.js 22 or newer (@restatedev/restate-sdk uses Promise.withResolvers); this is Node.js ${version}`
    expectExact(thrown(() => checkNode({ node: "20.20.2" } as NodeJS.ProcessVersions, false)), Error, message("20.20.2"))
    expectExact(thrown(() => checkNode({ node: "21.7.0" } as NodeJS.ProcessVersions, true)), Error, message("21.7.0"))
    expect(thrown(() => checkNode({ node: "22.23.5" } as NodeJS.ProcessVersions, true))).toBeUndefined()
    if (Number(process.versions.node.split(".")[0]) < 22) {
      expectExact(await rejection(amlWorkflow(valid)), Error, message(process.versions.node))
    }
  })

  it("names the peer package to install when it is missing", async () => {
    const error = await rejection(importPeer("@restatedev/not-installed-here"))
    expectExact(error, Error, "@aml-jsx/sdk/restate needs the optional peer dependency @restatedev/not-installed-here: npm install @restatedev/not-installed-here")
    expect((error as Error).cause).toBeInstanceOf(Error)
  })
})

describe("createRestateJournal", () => {
  it("checks its options", () => {
    const base = { ingress: "http://127.0.0.1:1", object: "J", key: "k" }
    expectExact(thrown(() => createRestateJournal(undefined as never)), TypeError, "Restate journal options must be an object")
    expectExact(thrown(() => createRestateJournal({ ...base, key: "" })), TypeError, "Restate journal key must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, object: 1 as never })), TypeError, "Restate journal object must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, timeoutMs: 0 })), TypeError, "Restate journal timeoutMs must be a positive integer")
    expectExact(thrown(() => createRestateJournal({ ...base, ingress: "ftp://x" })), TypeError, 'Restate journal ingress "ftp://x" must be an http or https URL')
    expectExact(thrown(() => createRestateJournal({ ...base, attempt: "" })), TypeError, "Restate journal attempt must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, attempt: 7 as never })), TypeError, "Restate journal attempt must be a non-empty string")
  })

  it("sends the attempt token as x-aml-journal-attempt, over a header of that name in headers", async () => {
    const seen: IncomingHttpHeaders[] = []
    const server = createHttpServer((req, res) => {
      seen.push(req.headers)
      req.resume()
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(req.url?.endsWith("/load") ? "[]" : "null"))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const ingress = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`
    const headers = { authorization: "Bearer t", "X-AML-Journal-Attempt": "from headers" }
    const journal = createRestateJournal({ ingress, object: "J", key: "k", headers, attempt: "token-1" })
    const plain = createRestateJournal({ ingress, object: "J", key: "k", headers })
    try {
      await journal.entries()
      await journal.append({ key: "0/a", digest: "d", kind: "agent", value: { text: "x" } })
      await plain.append({ key: "0/a", digest: "d", kind: "agent", value: { text: "x" } })
    } finally {
      journal.close()
      plain.close()
      await new Promise((resolve) => server.close(resolve))
    }
    expect(seen.map((headers) => [headers["x-aml-journal-attempt"], headers.authorization])).toEqual([
      ["token-1", "Bearer t"],
      ["token-1", "Bearer t"],
      // Without `attempt`, headers go as given.
      ["from headers", "Bearer t"],
    ])
  })

  it("fails loads and records with a message naming the object and the step", async () => {
    const journal = createRestateJournal({ ingress: `http://127.0.0.1:${await closedPort()}`, object: "J", key: "order 7" })
    try {
      const loading = (await rejection(Promise.resolve(journal.entries()))) as Error
      expect(loading.constructor).toBe(Error)
      expect(loading.message.startsWith("AML Restate journal could not load J/order 7: ")).toBe(true)
      expect(loading.message).toContain("refused")
      const entry = { key: "0/a", digest: "d", kind: "agent" as const, value: { text: "x" } }
      const recording = (await rejection(Promise.resolve(journal.append(entry)))) as Error
      expect(recording.message.startsWith("AML Restate journal could not record step 0/a: ")).toBe(true)
    } finally {
      journal.close()
    }
  })
})
