// `aml run examples/script.tsx` — a <Script> inside a local Sandbox: its relative cwd
// resolves from the Sandbox root (the sample repository), not from the CLI's directory.
import { fileURLToPath } from "node:url"

import { Sandbox, Script, localSandbox } from "@aml-jsx/sdk"

const sample = fileURLToPath(new URL("./review-sample", import.meta.url))

export default (
  <Sandbox access="read-write" provider={localSandbox({ workspace: sample })}>
    <Script shell="sh" cwd="src">
      {"ls && wc -l < math.js"}
    </Script>
  </Sandbox>
)
