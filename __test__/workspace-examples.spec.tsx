// The documented Workspace and File examples (getting-started step 4, the File reference,
// the sandboxes-and-workspaces cookbook). localWorkspace is another task's; until it lands,
// `directoryWorkspace` (support/workspace.ts) stands in for it: an in-place directory.
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, beforeEach, expect, test } from "vitest"

import { Agent, AmlRuntime, File, localSandbox, Sandbox, Script, supportsSandboxRuntime, Workspace } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

import { directoryWorkspace, scratch } from "./support/workspace.js"

let dir: { directory: string; cleanup: () => Promise<void> }
beforeEach(async () => {
  dir = await scratch("aml-guide-")
})
afterEach(() => dir.cleanup())

test("getting started: File, then a read-write local Sandbox running a Script", async () => {
  const runtime = new AmlRuntime({
    sandboxProvider: localSandbox(),
    workspaceProvider: directoryWorkspace(dir.directory).provider,
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
  expect(await readFile(join(dir.directory, "brief.txt"), "utf8")).toBe("Inspect this isolated guide directory.")
})

test("File reference: reports/summary.md", async () => {
  const runtime = new AmlRuntime({ workspaceProvider: directoryWorkspace(dir.directory).provider })
  await runtime.evaluate(
    <Workspace id="file-example" load={false} save={false}>
      <File path="reports/summary.md">Review completed.</File>
    </Workspace>,
  )
  expect(await readFile(join(dir.directory, "reports/summary.md"), "utf8")).toBe("Review completed.")
})

test("File reference: a planner's result is written before the reviewer runs", async () => {
  const planner = new DeterministicAgentProvider({ name: "planner", respond: () => ({ text: "1. Do it." }) })
  const reviewer = new DeterministicAgentProvider({
    name: "reviewer",
    respond: async () => ({ text: `reviewed:${await readFile(join(dir.directory, "handoff/plan.md"), "utf8")}` }),
  })
  const { calls, provider: workspace } = directoryWorkspace(dir.directory)
  const output = await new AmlRuntime().evaluate(
    <Workspace id="review-42" provider={workspace} save>
      <File path="handoff/plan.md">
        <Agent provider={planner}>Write the implementation plan.</Agent>
      </File>
      <Agent provider={reviewer}>Review handoff/plan.md.</Agent>
    </Workspace>,
  )
  expect(output).toBe("reviewed:1. Do it.")
  expect(calls).toEqual(["acquire", "save", "release"])
})

test("cookbook: combine Sandboxes and Workspaces", async () => {
  const workspace = directoryWorkspace(dir.directory).provider
  const sandbox = localSandbox()
  const provider = new DeterministicAgentProvider({
    supportsSandbox: supportsSandboxRuntime,
    respond(_request, context) {
      if (context.sandbox === undefined) throw new Error("The Agent must receive the active Sandbox")
      return { text: `inspected:${context.sandbox.cwd}:${context.sandbox.lease.id}` }
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
  const output = await new AmlRuntime().evaluate(workflow)
  expect(output).toMatch(/^inspected:\.:local:[0-9a-f-]{36}$/)
  expect(await readFile(join(dir.directory, "reports/summary.md"), "utf8")).toBe("Generated before the Sandbox runs.")
})
