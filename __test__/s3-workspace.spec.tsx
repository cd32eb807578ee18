// s3Workspace end to end against moto: a <Workspace> saves a revision through each client
// path (native `config`, application `client`) and a fresh evaluation restores it.

import { ListObjectsV2Command } from "@aws-sdk/client-s3"
import { AmlRuntime, File, Script, Sandbox, Workspace, localSandbox, s3Workspace } from "@aml-jsx/sdk"
import { afterAll, beforeAll, describe, expect } from "vitest"

import { expectExact } from "./support/errors.js"
import { startMoto, type Moto } from "./support/moto.js"
import { testNeeding } from "./support/test-groups.js"

// Needs the moto S3 server (scripts/test-groups.js): skipped, and named so, where this machine lacks it.
const it = testNeeding("moto")

let moto: Moto
beforeAll(async () => {
  moto = await startMoto()
}, 180_000)
afterAll(async () => moto?.stop())

const credentials = { accessKeyId: "testing", secretAccessKey: "testing" }

function providers(bucket: string) {
  return {
    client: (format: "archive" | "folder") => s3Workspace({ bucket, client: moto.client(), format }),
    native: (format: "archive" | "folder") =>
      s3Workspace({ bucket, config: { credentials, endpoint: moto.endpoint, forcePathStyle: true }, format }),
  }
}

async function keys(bucket: string): Promise<string[]> {
  const listed = await moto.client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "aml/workspaces/" }))
  return (listed.Contents ?? []).map((entry) => entry.Key ?? "").sort()
}

describe("s3Workspace (moto)", () => {
  for (const path of ["native", "client"] as const) {
    for (const format of ["archive", "folder"] as const) {
      it(`saves and restores a revision through the ${path} client (${format})`, async () => {
        const bucket = await moto.bucket()
        const provider = providers(bucket)[path](format)
        expect(provider.name).toBe("s3")
        const runtime = new AmlRuntime()
        await runtime.evaluate(
          <Workspace id="review" provider={provider} save>
            <File path="notes/summary.md">first revision</File>
          </Workspace>,
        )
        const stored = await keys(bucket)
        expect(stored).toContain("aml/workspaces/review/workspace.json")
        expect(stored.some((key) => key.startsWith("aml/workspaces/review/revisions/"))).toBe(true)
        // The lock is released with the lease.
        expect(stored).not.toContain("aml/workspaces/review/lock.json")

        const restored = await runtime.evaluate(
          <Workspace id="review" provider={providers(bucket)[path](format)}>
            <Sandbox access="read-write" provider={localSandbox()}>
              <Script command="cat" args={["notes/summary.md"]} />
            </Sandbox>
          </Workspace>,
        )
        expect(restored).toBe("first revision")
      }, 120_000)
    }
  }

  it("a second writer of one id is refused while the first holds the lock", async () => {
    const bucket = await moto.bucket()
    const provider = providers(bucket).native("archive")
    const first = await provider.acquire({ evaluationId: "a", id: "shared", lock: true, save: true, signal: new AbortController().signal })
    try {
      const error = await provider
        .acquire({ evaluationId: "b", id: "shared", lock: true, save: true, signal: new AbortController().signal })
        .then(() => undefined, (caught: unknown) => caught)
      expect((error as { code?: string }).code).toBe("AML_WORKSPACE_CONFLICT")
    } finally {
      await first.release()
    }
  }, 120_000)

  it("checks its options before any I/O", () => {
    const thrown = (make: () => unknown) => {
      try {
        make()
      } catch (error) {
        return error
      }
      return undefined
    }
    expectExact(thrown(() => s3Workspace({ bucket: "" })), TypeError, "S3 Workspace bucket must be a non-empty normalized string")
    expectExact(
      thrown(() => s3Workspace({ bucket: "b", client: moto.client(), config: {} })),
      TypeError,
      "S3 Workspace accepts client or config, not both",
    )
  })
})
