// A callable Tool call from a component in a journaled evaluation (docs/JOURNAL.md): keyed
// by the component's position and the ordinal of the call within it, replayed when the input
// digest matches. A replayed call still opens and closes its `tool` span (with
// `journal.replayed: true`) and resolves with a frozen copy of the recorded output; the
// executor does not run. A live call's span names its key with a `journal.step` point, as
// a live Agent's does, so the studio can re-run from it (docs/STUDIO.md).

import { toolDigest } from "./digest.js"
import { snapshotJson } from "../schema/stable-json.js"
import { runToolSpan } from "../tools/instrumentation.js"

const REPLAYED = Object.freeze({ "journal.replayed": true })

export async function callJournaledTool(domain, task, port, input) {
  const session = domain.journal
  const parentSpanId = domain.native.currentSpan(task)
  const key = session.toolKey(task)
  let snapshot
  try {
    snapshot = port.snapshotInput(input)
  } catch {
    // Invalid input: runToolSpan reports it under the Tool's span, as without a journal.
    return runToolSpan(domain, port, input, parentSpanId, domain.signal)
  }
  const digest = toolDigest(port, snapshot)
  const recorded = session.lookup(key, "tool")
  if (recorded !== undefined && recorded.digest === digest) {
    const spanId = domain.openSpan("tool", port.name, parentSpanId)
    session.replayed(spanId, parentSpanId, "tool", key)
    const output = snapshotJson(recorded.value.output, "Tool output")
    if (!domain.closed) domain.closeSpan(spanId, false, undefined, REPLAYED)
    return output
  }
  if (recorded !== undefined) session.diverged(parentSpanId, undefined, "tool", key)
  const output = await runToolSpan(domain, port, input, parentSpanId, domain.signal, key)
  const pending = session.record(key, "tool", digest, { output })
  if (pending !== undefined) await pending
  return output
}
