// `aml run examples/docker.tsx` — cross a real container boundary: a <Sandbox> backed by
// dockerSandbox() bind-mounts the sample repository into a disposable container, a <Script>
// runs inside it (its cwd resolved from the Sandbox root), and a deterministic Agent is
// launched in the same Sandbox. The container is removed when the Sandbox releases.
//
// Needs a running Docker daemon (on its Unix socket). AML_DOCKER_IMAGE picks the image
// (default: dockerSandbox's own, which the daemon may pull); any image with `sh` works.
import { fileURLToPath } from "node:url"

import { Agent, Sandbox, Script, dockerSandbox, supportsSandboxRuntime } from "@aml-jsx/sdk"
import { DeterministicAgentProvider } from "@aml-jsx/sdk/testing"

const sample = fileURLToPath(new URL("./review-sample", import.meta.url))
const image = process.env.AML_DOCKER_IMAGE || undefined

const inspector = new DeterministicAgentProvider({
  name: "inspector",
  supportsSandbox: supportsSandboxRuntime,
  respond: async (request, context) => {
    const sandbox = context.sandbox
    if (sandbox === undefined) throw new Error("the Agent must run inside the Sandbox")
    // What the agent's own shell would see: the mounted repository, from inside the container.
    const probe = await sandbox.lease.runtime.exec("sh", ["-c", "test -f /.dockerenv && echo container; ls src"], { cwd: sandbox.cwd, signal: context.signal })
    return { text: `agent (${sandbox.access}, cwd ${sandbox.cwd}): ${probe.stdout.trim().split("\n").join(" ")}` }
  },
})

export default (
  <Sandbox provider={dockerSandbox({ ...(image === undefined ? {} : { image }), workspace: sample })} access="read-write">
    script: <Script shell="sh" cwd="src">{"ls && wc -l < math.js"}</Script>
    <Agent provider={inspector}>Inspect the mounted repository.</Agent>
  </Sandbox>
)
