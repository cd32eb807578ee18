// `aml run examples/workspace-persistence.tsx`, twice — a <Workspace> whose files survive
// the run: filesystemWorkspace restores the latest saved revision into a fresh
// materialization, the run's <Script> reads and updates a counter and a log there, and on
// success the Workspace publishes a new revision (keeping the last three). The first run
// prints `run 1`, the next `run 2` with the first run's log line restored, and so on.
//
// The revision store is AML_WORKSPACE_STORE, or `aml-workspace-persistence` under the OS
// temporary directory (delete it to start over).
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

import { Sandbox, Script, Workspace, filesystemWorkspace, localSandbox } from "@aml-jsx/sdk"

const store = resolve(process.env.AML_WORKSPACE_STORE ?? join(tmpdir(), "aml-workspace-persistence"))
mkdirSync(store, { recursive: true })

const update = String.raw`
previous=$(cat state/count 2>/dev/null || echo 0)
count=$((previous + 1))
mkdir -p state
echo "$count" > state/count
echo "run $count" >> state/log.txt
echo "run $count (runs restored from the last revision: $previous)"
cat state/log.txt
`

export default (
  <Workspace id="notes" provider={filesystemWorkspace({ directory: store })} save={{ on: "success", retention: 3 }}>
    <Sandbox provider={localSandbox()} access="read-write">
      <Script shell="sh">{update}</Script>
    </Sandbox>
  </Workspace>
)
