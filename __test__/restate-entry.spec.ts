// @aml-jsx/sdk/restate on the package's own Node (20 or newer): its options, Node and peer
// checks and the journal's failures, without a Restate server (restate-durable.spec.ts has one).
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http"
import { createServer } from "node:net"

import { describe, expect, it } from "vitest"

import { amlWorkflow, createRestateJournal } from "@aml-jsx/sdk/restate"
import { AmlRuntime, describeFailure } from "@aml-jsx/sdk"

import { checkNode, importPeer } from "../lib/durable/restate-sdk.js"
import { expectExact } from "./support/errors.js"

const secret = "a secret every worker shares, 32+ chars"
const valid = { name: "W", ingress: "http://127.0.0.1:1", runtime: new AmlRuntime(), render: () => "x", journalSecret: secret }

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
      [{ ...valid, ingress: "ftp://restate:8080" }, 'amlWorkflow ingress "ftp://restate:8080" must be an http or https URL'],
      [{ ...valid, ingress: "restate:8080" }, 'amlWorkflow ingress "restate:8080" must be an http or https URL'],
      [{ ...valid, journalTimeoutMs: 0 }, "amlWorkflow journalTimeoutMs must be a positive integer of milliseconds up to 4294967295"],
      [{ ...valid, journalTimeoutMs: 1.5 }, "amlWorkflow journalTimeoutMs must be a positive integer of milliseconds up to 4294967295"],
      [{ ...valid, journalTimeoutMs: 2 ** 32 }, "amlWorkflow journalTimeoutMs must be a positive integer of milliseconds up to 4294967295"],
      [{ ...valid, journalTimeoutMs: "5000" }, "amlWorkflow journalTimeoutMs must be a positive integer of milliseconds up to 4294967295"],
      [{ ...valid, ingressHeaders: [["a", "b"]] }, "amlWorkflow ingressHeaders must be an object of header names to string values"],
      [{ ...valid, ingressHeaders: { authorization: 7 } }, "amlWorkflow ingressHeaders must be an object of header names to string values"],
      [{ ...valid, ingressHeaders: { "a b": "x" } }, 'amlWorkflow ingressHeaders: header "a b" is not a valid HTTP header name'],
      [{ ...valid, ingressHeaders: { a: "line\nbreak" } }, 'amlWorkflow ingressHeaders: header "a" has a value that is not valid in HTTP'],
      [{ ...valid, journalSecret: "short" }, "amlWorkflow journalSecret must be a string of at least 32 characters (or set AML_RESTATE_JOURNAL_SECRET): every worker of the deployment shares it"],
    ]
    for (const [options, message] of cases) expectExact(await rejection(amlWorkflow(options as never)), TypeError, message)
    expectExact(await rejection(amlWorkflow(null as never)), TypeError, "amlWorkflow options must be an object")
    // The secret defaults to the environment's; without either, amlWorkflow says where to set it.
    const saved = process.env.AML_RESTATE_JOURNAL_SECRET
    delete process.env.AML_RESTATE_JOURNAL_SECRET
    try {
      expectExact(
        await rejection(amlWorkflow({ ...valid, journalSecret: undefined })),
        TypeError,
        "amlWorkflow journalSecret must be a string of at least 32 characters (or set AML_RESTATE_JOURNAL_SECRET): every worker of the deployment shares it",
      )
      process.env.AML_RESTATE_JOURNAL_SECRET = secret
      const passed = await rejection(amlWorkflow({ ...valid, journalSecret: undefined }))
      expect(passed instanceof TypeError ? passed.message : "").not.toContain("journalSecret")
    } finally {
      if (saved === undefined) delete process.env.AML_RESTATE_JOURNAL_SECRET
      else process.env.AML_RESTATE_JOURNAL_SECRET = saved
    }
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

/** A loopback HTTP server answering every request with `answer(url)`; logs the requests. */
async function ingressStub(answer: (url: string) => [number, string]) {
  const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = []
  const server = createHttpServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (body += chunk))
    req.on("end", () => {
      seen.push({ url: req.url ?? "", headers: req.headers, body })
      const [status, text] = answer(req.url ?? "")
      res.writeHead(status, { "content-type": "application/json" }).end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const ingress = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`
  return { ingress, seen, close: () => new Promise((resolve) => server.close(resolve)) }
}

const step = { key: "0/a", digest: "d", kind: "agent" as const, value: { text: "x" } }

describe("createRestateJournal", () => {
  it("checks its options", () => {
    const base = { ingress: "http://127.0.0.1:1", object: "J", key: "k", secret }
    expectExact(thrown(() => createRestateJournal(undefined as never)), TypeError, "Restate journal options must be an object")
    expectExact(thrown(() => createRestateJournal({ ...base, key: "" })), TypeError, "Restate journal key must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, object: 1 as never })), TypeError, "Restate journal object must be a non-empty string")
    for (const timeoutMs of [0, -1, 2 ** 32, 0.5]) {
      expectExact(thrown(() => createRestateJournal({ ...base, timeoutMs })), TypeError, "Restate journal timeoutMs must be a positive integer of milliseconds up to 4294967295")
    }
    expect(thrown(() => createRestateJournal({ ...base, timeoutMs: 2 ** 32 - 1 }).close())).toBeUndefined()
    expectExact(thrown(() => createRestateJournal({ ...base, ingress: "ftp://x" })), TypeError, 'Restate journal ingress "ftp://x" must be an http or https URL')
    expectExact(thrown(() => createRestateJournal({ ...base, attempt: "" })), TypeError, "Restate journal attempt must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, attempt: 7 as never })), TypeError, "Restate journal attempt must be a non-empty string")
    expectExact(thrown(() => createRestateJournal({ ...base, run: 7 as never })), TypeError, "Restate journal run must be a string")
    expectExact(thrown(() => createRestateJournal({ ...base, secret: undefined as never })), TypeError, "Restate journal secret must be a string of at least 32 characters")
    expectExact(thrown(() => createRestateJournal({ ...base, headers: { a: 1 as never } })), TypeError, "Restate journal headers must be an object of header names to string values")
    expectExact(thrown(() => createRestateJournal({ ...base, headers: { "": "x" } })), TypeError, 'Restate journal headers: header "" is not a valid HTTP header name')
  })

  it("sends the run and the attempt token as its own headers, over any of those names in headers, and the entry sealed", async () => {
    const stub = await ingressStub((url) => [200, url.endsWith("/load") ? '{"count":0}' : "null"])
    const headers = { authorization: "Bearer t", "X-AML-Journal-Attempt": "from headers", "x-aml-journal-run": "from headers" }
    const journal = createRestateJournal({ ingress: stub.ingress, object: "J", key: "k", secret, headers, attempt: "token-1", run: "run-1" })
    const plain = createRestateJournal({ ingress: stub.ingress, object: "J", key: "k", secret, headers })
    try {
      expect(await journal.entries()).toEqual([])
      await journal.append(step)
      await plain.append(step)
    } finally {
      journal.close()
      plain.close()
      await stub.close()
    }
    expect(stub.seen.map(({ url, headers }) => [url, headers["x-aml-journal-run"], headers["x-aml-journal-attempt"], headers.authorization])).toEqual([
      ["/J/k/load", "run-1", "token-1", "Bearer t"],
      ["/J/k/record", "run-1", "token-1", "Bearer t"],
      // Without `run` and `attempt`, the protocol's headers are not sent at all: never the caller's.
      ["/J/k/record", undefined, undefined, "Bearer t"],
    ])
    const stored = JSON.parse(stub.seen[1]!.body) as Record<string, string>
    expect(Object.keys(stored)).toEqual(["key", "digest", "sealed"])
    expect(stored.sealed).not.toContain('"text"')
  })

  it("fails loads and records with a message naming the object and the step, and a code that says whether a retry helps", async () => {
    const journal = createRestateJournal({ ingress: `http://127.0.0.1:${await closedPort()}`, object: "J", key: "order 7", secret })
    try {
      const loading = (await rejection(Promise.resolve(journal.entries()))) as Error & { code?: string }
      expect(loading.constructor).toBe(Error)
      expect(loading.message.startsWith("AML Restate journal could not load J/order 7: ")).toBe(true)
      expect(loading.message).toContain("refused")
      expect(loading.code).toBe("AML_JOURNAL_UNAVAILABLE")
      expect(describeFailure(loading)).toEqual({ kind: "journal", message: "AML Restate journal could not load J/order 7", retryable: true })
      const recording = (await rejection(Promise.resolve(journal.append(step)))) as Error & { code?: string }
      expect(recording.message.startsWith("AML Restate journal could not record step 0/a: ")).toBe(true)
      expect(recording.code).toBe("AML_JOURNAL_UNAVAILABLE")
    } finally {
      journal.close()
    }
  })

  it("classes each answer of the ingress", async () => {
    const cases: [number, string, string, boolean][] = [
      [503, "AML_JOURNAL_UNAVAILABLE", "journal", true],
      [500, "AML_JOURNAL_UNAVAILABLE", "journal", true],
      [429, "AML_JOURNAL_UNAVAILABLE", "journal", true],
      [409, "AML_JOURNAL_FENCED", "journal", true],
      [404, "AML_JOURNAL_DEPLOYMENT", "configuration", false],
      [403, "AML_JOURNAL_REJECTED", "configuration", false],
    ]
    for (const [status, code, kind, retryable] of cases) {
      const stub = await ingressStub(() => [status, '{"message":"no"}'])
      const journal = createRestateJournal({ ingress: stub.ingress, object: "J", key: "k", secret })
      try {
        const error = (await rejection(Promise.resolve(journal.append(step)))) as Error & { code?: string }
        expect(error.message.startsWith(`AML Restate journal could not record step 0/a: Restate answered ${status}: {"message":"no"}`), error.message).toBe(true)
        expect(error.code).toBe(code)
        expect(describeFailure(error)).toEqual({ kind, message: "AML Restate journal could not record step 0/a", retryable })
      } finally {
        journal.close()
        await stub.close()
      }
    }
  })

  it("refuses an entry over the size bound before sending it", async () => {
    const stub = await ingressStub(() => [200, "null"])
    const journal = createRestateJournal({ ingress: stub.ingress, object: "J", key: "k", secret })
    try {
      const big = { ...step, value: { text: "x".repeat(8 << 20) } }
      const error = (await rejection(Promise.resolve(journal.append(big)))) as Error & { code?: string }
      expect(error.message).toMatch(/^AML Restate journal could not record step 0\/a: step 0\/a is \d+ bytes as stored, over the 8388608-byte limit of one entry$/)
      expect(error.code).toBe("AML_JOURNAL_TOO_LARGE")
      expect(describeFailure(error)).toEqual({ kind: "limit", message: "AML Restate journal could not record step 0/a", retryable: false })
      expect(stub.seen).toEqual([])
    } finally {
      journal.close()
      await stub.close()
    }
  })
})
