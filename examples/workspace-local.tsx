// `aml run examples/workspace-local.tsx` — a <Workspace> over a local directory with local
// Sandboxes inside it: <File> writes into the Workspace, a <Script> in the read-write
// Sandbox and an Agent launched in it see the file from their cwd, and the file is still on
// disk after the run. Deterministic: no model, Docker or credentials. (The Sandbox is
// read-write: a local Sandbox runs host processes, which cannot enforce read-only access,
// so it refuses to run commands under it.)
//
// The directory is AML_WORKSPACE_DIR, or `aml-workspace-local` under the OS temporary
// directory (created if missing and reused by every run; `save={false}`, so localWorkspace
// writes straight into it and keeps no revisions).
import { mkdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

import { Agent, File, Sandbox, Script, Workspace, localSandbox, localWorkspace, supportsSandboxRuntime } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const directory = resolve(process.env.AML_WORKSPACE_DIR ?? join(tmpdir(), "aml-workspace-local"))
mkdirSync(directory, { recursive: true })

// Stands in for a coding agent: it reports the Sandbox session it was launched in.
const inspector = new DeterministicAgentProvider({
  name: "inspector",
  supportsSandbox: supportsSandboxRuntime,
  respond: (request, context) => {
    const sandbox = context.sandbox
    if (sandbox === undefined) throw new Error("the Agent must run inside the Sandbox")
    return { text: `agent: ${request.prompt.trim()} (cwd ${sandbox.cwd}, ${sandbox.access})` }
  },
})

// Runs after the Workspace released its lease: what is left on disk.
function OnDisk() {
  return `on disk: reports/summary.md = "${readFileSync(join(directory, "reports/summary.md"), "utf8")}"`
}

export default (
  <>
    <Workspace id="workspace-local" provider={localWorkspace({ directory })} save={false}>
      <File path="reports/summary.md">Generated before the Sandbox runs.</File>
      <Sandbox provider={localSandbox()} access="read-write">
        script: <Script shell="sh" cwd="reports">{"ls && wc -c < summary.md"}</Script>
        <Agent provider={inspector} cwd="reports">
          Inspect the report without modifying files.
        </Agent>
      </Sandbox>
    </Workspace>
    {"\n"}
    <OnDisk />
  </>
)
