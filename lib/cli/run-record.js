// `aml run` records its run for the studio (docs/STUDIO.md) unless `--no-record`: the SDK's
// `recordRuns`, plus what only the CLI knows (the workflow file, export and working
// directory a re-run needs, the run it re-runs) and the run's journal.
import { runsDirectory } from "./studio.js"

const RECORD_CONTEXT = Symbol.for("@aml-jsx/sdk/run-record-context")

export function recordRun(recordRuns, runtime, options, { journal, implicit, path, exportName, cwd }) {
  const meta = { workflow: path, export: exportName, cwd }
  if (options.entry !== undefined) meta.entry = options.entry
  if (options.rerunOf !== undefined) {
    meta.rerunOf = options.rerunOf
    meta.from = options.from
  }
  const context = { meta, journal: { journal, workflow: `${path}#${exportName}`, implicit } }
  return recordRuns(runtime, { dir: runsDirectory(options), captureContent: options.captureContent, [RECORD_CONTEXT]: context })
}
