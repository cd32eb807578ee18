// `aml studio` and `aml runs prune` (docs/STUDIO.md): CLI glue only. The server, its checks
// and the run store are Rust (crates/aml-studio, crates/aml-runs).
import { randomBytes } from "node:crypto"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"

import { CliUsageError } from "./args.js"

/** The runs directory of a command: `--dir`/`--runs-dir`, `AML_RUNS_DIR`, or `.aml/runs`. */
export function runsDirectory(options, env = process.env, cwd = process.cwd()) {
  return resolve(cwd, options.runsDir ?? env.AML_RUNS_DIR ?? ".aml/runs")
}

function wholeNumber(text, option) {
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text)) throw new CliUsageError(`option \`${option}\` must be a whole number`)
  return Number(text)
}

/** Serves until SIGINT/SIGTERM; resolves with the exit code. */
export async function studioCommand(options) {
  const port = wholeNumber(options.port, "--port <port>") ?? 0
  if (port > 65535) throw new CliUsageError("option `--port <port>` must be at most 65535")
  const { studioClosed, studioStart, studioStop } = await import("../core/native.js")
  const dir = runsDirectory(options)
  const token = randomBytes(24).toString("hex")
  const bin = fileURLToPath(new URL("../../bin/aml.js", import.meta.url))
  const bound = await studioStart(dir, port, token, process.execPath, [bin])
  process.stdout.write(`http://127.0.0.1:${bound}/?token=${token}\n`)
  process.stderr.write(`aml: studio serving ${dir}; stop with Ctrl-C\n`)
  const stop = () => studioStop(bound)
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  await studioClosed(bound)
  return 0
}

/** `aml runs prune`: keeps the newest `--keep` runs (default 50) and those newer than `--older-than` days. */
export async function pruneCommand(options) {
  const keep = wholeNumber(options.keep, "--keep <count>")
  const days = wholeNumber(options.olderThan, "--older-than <days>")
  const { runsPrune } = await import("../core/native.js")
  const dir = runsDirectory(options)
  const removed = runsPrune(dir, keep ?? (days === undefined ? 50 : undefined), days === undefined ? undefined : Date.now() - days * 86_400_000)
  process.stdout.write(`aml: removed ${removed.length} ${removed.length === 1 ? "run" : "runs"} from ${dir}\n`)
  return 0
}
