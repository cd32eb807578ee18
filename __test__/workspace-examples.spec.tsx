// The documented Workspace and File examples, run with the storage the documents use:
// getting-started step 4, the File reference, the sandboxes-and-workspaces cookbook and the
// Workspace provider guides (localWorkspace and filesystemWorkspace over temporary
// directories, where the guides name fixed ones).
import { readdirSync } from "node:fs"
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, test } from "vitest"

import {
  Agent,
  AmlRuntime,
  File,
  filesystemWorkspace,
  localSandbox,
  localWorkspace,
  Sandbox,
  Script,
  supportsSandboxRuntime,
  Workspace,
  workspaceStorageSegment,
} from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const made: string[] = []
async function temporary(prefix: string) {
  const directory = await mkdtemp(join(tmpdir(), prefix))
  made.push(directory)
  return directory
}
afterEach(async () => {
  await Promise.all(made.splice(0).map((directory) => rm(directory, { force: true, recursive: true })))
})

/** Nothing of the lock is left beside the Workspace directory. */
async function unlocked(directory: string) {
  const parent = join(directory, "..")
  const name = directory.slice(parent.length + 1)
  expect((await readdir(parent)).filter((entry) => entry.startsWith(`${name}.lock`))).toEqual([])
}

test("getting started step 4: File, then a read-write local Sandbox running a Script", async () => {
  const directory = await temporary("aml-guide-")
  const runtime = new AmlRuntime({
    sandboxProvider: localSandbox(),
    workspaceProvider: localWorkspace({ directory }),
  })

  const output = await runtime.evaluate(
    <Workspace id="guide" load={false} save={false}>
      <File path="brief.txt">Inspect this isolated guide directory.</File>
      <Sandbox access="read-write">
        <Script command="node" args={["-e", "console.log('workspace ready')"]} />
      </Sandbox>
    </Workspace>,
  )

  expect(output).toBe("workspace ready\n")
  expect(await readFile(join(directory, "brief.txt"), "utf8")).toBe("Inspect this isolated guide directory.")
  await unlocked(directory)
})

test("File reference: reports/summary.md through localWorkspace", async () => {
  const directory = await temporary("aml-file-")
  const runtime = new AmlRuntime({ workspaceProvider: localWorkspace({ directory }) })
  await runtime.evaluate(
    <Workspace id="file-example" load={false} save={false}>
      <File path="reports/summary.md">Review completed.</File>
    </Workspace>,
  )
  expect(await readFile(join(directory, "reports/summary.md"), "utf8")).toBe("Review completed.")
})

test("File reference: a planner's result is written before the reviewer runs", async () => {
  const directory = await temporary("aml-file-")
  const workspace = localWorkspace({ directory })
  const planner = new DeterministicAgentProvider({ name: "planner", respond: () => ({ text: "1. Do it." }) })
  const reviewer = new DeterministicAgentProvider({
    name: "reviewer",
    respond: async () => ({ text: `reviewed:${await readFile(join(directory, "handoff/plan.md"), "utf8")}` }),
  })
  const output = await new AmlRuntime().evaluate(
    <Workspace id="review-42" provider={workspace} save>
      <File path="handoff/plan.md">
        <Agent provider={planner}>Write the implementation plan.</Agent>
      </File>
      <Agent provider={reviewer}>Review handoff/plan.md.</Agent>
    </Workspace>,
  )
  expect(output).toBe("reviewed:1. Do it.")
  await unlocked(directory)
})

test("cookbook: combine Sandboxes and Workspaces (complete source)", async () => {
  const directory = await temporary("aml-cookbook-")
  const workspace = localWorkspace({ directory })
  const sandbox = localSandbox()

  const provider = new DeterministicAgentProvider({
    supportsSandbox: supportsSandboxRuntime,
    respond(_request, context) {
      if (context.sandbox === undefined) {
        throw new Error("The Agent must receive the active Sandbox")
      }

      return {
        text: `inspected:${context.sandbox.cwd}:${context.sandbox.lease.id}`,
      }
    },
  })

  const workflow = (
    <Workspace id="cookbook-review" provider={workspace} save={false}>
      <File path="reports/summary.md">Generated before the Sandbox runs.</File>
      <Sandbox provider={sandbox} access="read-only" root=".">
        <Agent provider={provider} cwd=".">
          Inspect the report without modifying files.
        </Agent>
      </Sandbox>
    </Workspace>
  )

  const lines = [await new AmlRuntime().evaluate(workflow), `workspace=${directory}`]
  // "The exact lease ID is provider-generated, so the stable shape is:"
  expect(lines[0]).toMatch(/^inspected:\.:local:[0-9a-f-]{36}$/)
  expect(lines[1]).toMatch(/^workspace=.*\/aml-cookbook-[A-Za-z0-9]{6}$/)
  // "The temporary directory contains reports/summary.md"
  expect(await readFile(join(directory, "reports/summary.md"), "utf8")).toBe("Generated before the Sandbox runs.")
  await unlocked(directory)
})

test("local Workspace guide: save verifies the lock and keeps every direct write", async () => {
  const directory = await temporary("aml-local-")
  const repository = localWorkspace({ directory })
  await new AmlRuntime().evaluate(
    <Workspace id="review-42" provider={repository} load={false} save={{ on: "success", include: ["reports/**"] }}>
      <File path="reports/summary.md">The review completed successfully.</File>
      <File path="notes.txt">Outside the include.</File>
    </Workspace>,
  )
  expect(await readFile(join(directory, "reports/summary.md"), "utf8")).toBe("The review completed successfully.")
  // "It does not create a revision or filter which already-written files remain on disk."
  expect((await readdir(directory)).sort()).toEqual(["notes.txt", "reports"])
})

test("Workspace providers guide: a filesystemWorkspace report, published and restored", async () => {
  const store = await temporary("aml-store-")
  const scratch = await temporary("aml-tmp-")
  const provider = filesystemWorkspace({ directory: store, temporaryDirectory: scratch })
  await new AmlRuntime().evaluate(
    <Workspace id="report" provider={provider} load={false} save={{ on: "success", include: ["reports/**"], retention: 2 }}>
      <File path="reports/summary.md">Generated report content</File>
      <File path="scratch.txt">Not selected.</File>
    </Workspace>,
  )
  const segment = join(store, workspaceStorageSegment("report"))
  const index = JSON.parse(await readFile(join(segment, "workspace.json"), "utf8"))
  expect(index.revisions).toHaveLength(1)
  expect(index.revisions[0]).toMatchObject({ format: "archive", id: index.current })
  expect(await readdir(scratch)).toEqual([]) // the materialization was released

  // "For a second run, omit load ... to restore the last published revision."
  const seen = new DeterministicAgentProvider({
    respond: async () => ({ text: (await readdir(restored!, { recursive: true })).sort().join(",") }),
  })
  let restored: string | undefined
  const Probe = () => {
    restored = readdirTarget(scratch)
    return <Agent provider={seen}>List the restored files.</Agent>
  }
  const output = await new AmlRuntime().evaluate(
    <Workspace id="report" provider={filesystemWorkspace({ directory: store, format: "folder", temporaryDirectory: scratch })}>
      <Probe />
    </Workspace>,
  )
  expect(output).toBe("reports,reports/summary.md")
})

/** The one materialization beneath `scratch` (`aml-workspace-XXXXXX/workspace`). */
function readdirTarget(scratch: string): string {
  const [root] = readdirSync(scratch).filter((entry) => entry.startsWith("aml-workspace-"))
  return join(scratch, root!, "workspace")
}
