// The Workspace testing helpers under a second runner (ava), through the package's own
// exports: workspaceProviderConformance and DeterministicWorkspaceProvider in a real run.
import test from "ava"

import { AmlRuntime, Workspace, WorkspaceConflictError } from "@aml-jsx/sdk"
import { jsx } from "@aml-jsx/sdk/jsx-runtime"
import { DeterministicWorkspaceProvider, workspaceProviderConformance } from "@aml-jsx/sdk/testing"

test("workspaceProviderConformance accepts the deterministic provider", async (t) => {
  await t.notThrowsAsync(workspaceProviderConformance(new DeterministicWorkspaceProvider({ name: "ava-workspace" })))
})

test("workspaceProviderConformance rejects a provider without writer exclusion", async (t) => {
  const provider = {
    name: "open",
    acquire: async () => ({ directory: "/d", handle: null, id: "x", save: async () => {}, release: async () => {} }),
  }
  const error = await t.throwsAsync(workspaceProviderConformance(provider), { instanceOf: TypeError })
  t.is(error.message, 'Workspace provider "open" allowed concurrent writers for "conformance-workspace"')
})

test("a real evaluation saves and releases once; conflicts are WorkspaceConflictError", async (t) => {
  const provider = new DeterministicWorkspaceProvider()
  const runtime = new AmlRuntime({ workspaceProvider: provider })
  t.is(await runtime.evaluate(jsx(Workspace, { id: "w", save: true, children: "done" })), "done")
  t.deepEqual(provider.saves, ["deterministic-workspace-1"])
  t.deepEqual(provider.releases, ["deterministic-workspace-1"])
  const held = await provider.acquire({ evaluationId: "e", id: "w", signal: new AbortController().signal })
  const error = await t.throwsAsync(provider.acquire({ evaluationId: "e", id: "w", signal: new AbortController().signal }))
  t.true(WorkspaceConflictError.is(error, "w"))
  await held.release()
})
