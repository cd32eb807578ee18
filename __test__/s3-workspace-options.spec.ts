import { tmpdir } from "node:os"

import { S3Client } from "@aws-sdk/client-s3"
import { describe, expect, it } from "vitest"

import { workspaceStorageSegment as storageSegment } from "@aml-jsx/sdk"
// @ts-expect-error internal module without declarations
import { validateS3WorkspaceOptions } from "../lib/workspace/s3/options.js"
import { expectExact } from "./support/errors.js"

function thrown(run: () => unknown): any {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

const client = new S3Client({ region: "us-east-1" })

describe("s3Workspace options (BW-3)", () => {
  it("applies the documented defaults", () => {
    expect(validateS3WorkspaceOptions({ bucket: "b" })).toEqual({
      bucket: "b",
      client: undefined,
      config: undefined,
      format: "archive",
      prefix: "aml/workspaces",
      temporaryDirectory: tmpdir(),
    })
    const full = validateS3WorkspaceOptions({
      bucket: "b",
      client,
      format: "folder",
      maxArchiveBytes: 1,
      maxEntries: 2,
      maxExtractedBytes: 3,
      lockLeaseMs: 3_000,
      prefix: "production/reviews",
      temporaryDirectory: "/var/tmp",
    })
    expect(full).toMatchObject({ client, format: "folder", lockLeaseMs: 3_000, maxArchiveBytes: 1, maxEntries: 2, maxExtractedBytes: 3 })
    // Without lockLeaseMs there is no key at all: the reference's 5/20 minutes apply.
    expect("lockLeaseMs" in validateS3WorkspaceOptions({ bucket: "b" })).toBe(false)
  })

  it("accepts lockLeaseMs from 1 second to the reference's 20 minutes", () => {
    for (const lockLeaseMs of [1_000, 3_000, 60_000, 1_200_000]) {
      expect(validateS3WorkspaceOptions({ bucket: "b", lockLeaseMs }).lockLeaseMs).toBe(lockLeaseMs)
    }
  })

  const cases: [string, unknown, new (...a: any[]) => Error, string][] = [
    ["not an object", "b", TypeError, "S3 Workspace options must be an object"],
    ["null", null, TypeError, "S3 Workspace options must be an object"],
    ["no bucket", {}, TypeError, "S3 Workspace bucket must be a non-empty normalized string"],
    ["padded bucket", { bucket: " b" }, TypeError, "S3 Workspace bucket must be a non-empty normalized string"],
    ["NUL bucket", { bucket: "b\0" }, TypeError, "S3 Workspace bucket must be a non-empty normalized string"],
    ["both", { bucket: "b", client, config: {} }, TypeError, "S3 Workspace accepts client or config, not both"],
    ["bad client", { bucket: "b", client: {} }, TypeError, "S3 Workspace client must be an S3Client"],
    ["bad config", { bucket: "b", config: "us-east-1" }, TypeError, "S3 Workspace config must be an S3ClientConfig object"],
    ["array config", { bucket: "b", config: [] }, TypeError, "S3 Workspace config must be an S3ClientConfig object"],
    ["empty prefix", { bucket: "b", prefix: "" }, TypeError, "S3 Workspace prefix must be a non-empty normalized string"],
    ["leading /", { bucket: "b", prefix: "/a" }, TypeError, "S3 Workspace prefix must not start or end with / or contain empty segments"],
    ["trailing /", { bucket: "b", prefix: "a/" }, TypeError, "S3 Workspace prefix must not start or end with / or contain empty segments"],
    ["empty segment", { bucket: "b", prefix: "a//b" }, TypeError, "S3 Workspace prefix must not start or end with / or contain empty segments"],
    ["traversal", { bucket: "b", prefix: "a/../b" }, TypeError, "S3 Workspace prefix must not contain traversal segments"],
    ["dot", { bucket: "b", prefix: "./a" }, TypeError, "S3 Workspace prefix must not contain traversal segments"],
    ["format", { bucket: "b", format: "zip" }, TypeError, 'S3 Workspace format must be "archive" or "folder"'],
    ["zero", { bucket: "b", maxArchiveBytes: 0 }, RangeError, "S3 Workspace maxArchiveBytes must be a positive safe integer"],
    ["fraction", { bucket: "b", maxEntries: 1.5 }, RangeError, "S3 Workspace maxEntries must be a positive safe integer"],
    ["unsafe", { bucket: "b", maxExtractedBytes: 2 ** 53 }, RangeError, "S3 Workspace maxExtractedBytes must be a positive safe integer"],
    ["string limit", { bucket: "b", maxEntries: "5" }, RangeError, "S3 Workspace maxEntries must be a positive safe integer"],
    ["lease zero", { bucket: "b", lockLeaseMs: 0 }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease negative", { bucket: "b", lockLeaseMs: -3000 }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease below 1 s", { bucket: "b", lockLeaseMs: 999 }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease above 20 min", { bucket: "b", lockLeaseMs: 1_200_001 }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease fraction", { bucket: "b", lockLeaseMs: 1500.5 }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease NaN", { bucket: "b", lockLeaseMs: Number.NaN }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease Infinity", { bucket: "b", lockLeaseMs: Number.POSITIVE_INFINITY }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease string", { bucket: "b", lockLeaseMs: "3000" }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease null", { bucket: "b", lockLeaseMs: null }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease boolean", { bucket: "b", lockLeaseMs: true }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["lease bigint", { bucket: "b", lockLeaseMs: 3000n }, RangeError, "S3 Workspace lockLeaseMs must be an integer from 1000 to 1200000"],
    ["temp", { bucket: "b", temporaryDirectory: "" }, TypeError, "S3 Workspace temporaryDirectory must be a non-empty normalized string"],
    ["temp padded", { bucket: "b", temporaryDirectory: "/tmp " }, TypeError, "S3 Workspace temporaryDirectory must be a non-empty normalized string"],
  ]
  it.each(cases)("rejects %s", (_name, options, type, message) => {
    expectExact(thrown(() => validateS3WorkspaceOptions(options)), type, message)
  })

  it("accepts any object with send() as a client (copies of the SDK, mocks)", () => {
    const copy = { send: async () => ({}) }
    expect(validateS3WorkspaceOptions({ bucket: "b", client: copy }).client).toBe(copy)
  })
})

describe("storage segment (WP-2 rule, the one in aml_workspace::paths that the S3 layout uses)", () => {
  it("encodes like encodeURIComponent plus !'()* and the dot segments", () => {
    expect(storageSegment("review-42_a.b~")).toBe("review-42_a.b~")
    expect(storageSegment("!'()*")).toBe("%21%27%28%29%2A")
    expect(storageSegment("a/b c")).toBe("a%2Fb%20c")
    expect(storageSegment("é😀")).toBe("%C3%A9%F0%9F%98%80")
    expect(storageSegment(".")).toBe("%2E")
    expect(storageSegment("..")).toBe("%2E%2E")
    expect(storageSegment("...")).toBe("...")
    expectExact(thrown(() => storageSegment(" a")), TypeError, "Workspace storage id must be a non-empty normalized string")
    // JavaScript white space, not Rust's: U+FEFF is trimmed, U+0085 is not.
    expectExact(thrown(() => storageSegment("\uFEFFa")), TypeError, "Workspace storage id must be a non-empty normalized string")
    expect(storageSegment("a\u0085")).toBe("a%C2%85")
    expectExact(thrown(() => storageSegment(1 as never)), TypeError, "Workspace storage id must be a non-empty normalized string")
    // encodeURIComponent's own failure for a lone surrogate stays.
    expect(thrown(() => storageSegment("a\uD800"))).toBeInstanceOf(URIError)
  })
})
