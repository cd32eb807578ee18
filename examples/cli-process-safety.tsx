// `aml run examples/cli-process-safety.tsx`, then Ctrl+C: the signal cancels the run, the
// local Sandbox tears down the whole process group (the shell and its `sleep`), releases
// its lease, and the CLI exits 130 (143 for SIGTERM). Set AML_PROCESS_SAFETY_PID_FILE to
// record the child's pid and check it is gone (docs/CLI.md).
import { cwd } from "node:process"

import { Sandbox, Script, localSandbox } from "@aml-jsx/sdk"

const LongRunningProcess = (
  <Sandbox access="read-write" provider={localSandbox({ workspace: cwd() })}>
    <Script shell="sh">
      {String.raw`
sleep 300 &
child=$!

if [ -n "$AML_PROCESS_SAFETY_PID_FILE" ]; then
  printf '%s\n' "$child" > "$AML_PROCESS_SAFETY_PID_FILE"
fi

wait "$child"
`}
    </Script>
  </Sandbox>
)

export default LongRunningProcess
