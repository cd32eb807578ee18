// Command-line parsing for `aml` (INVENTORY CLI-1). Hand-written rather than CAC: the
// grammar is one command with a handful of options, and a dependency would cost cold start for no
// gain. Messages follow CAC's, which the TypeScript CLI prints.

import { parseAgentChoice } from "./agent-choice.js"

/** Thrown for command-line mistakes; main() prints `aml: <message>` and exits 1. */
export class CliUsageError extends Error {
  constructor(message) {
    super(message)
    this.name = "CliUsageError"
  }
}

// name → whether the option takes a value. Short aliases map onto these names.
const OPTIONS = new Map([
  ["entry", true],
  ["runtime-env-file", true],
  ["trace", false],
  ["capture-content", false],
  ["json", false],
  ["journal", true],
  ["quiet", false],
  ["runs-dir", true],
  ["agent", true],
  ["record", false],
  ["no-record", false],
  ["from", true],
  ["rerun-of", true],
  ["port", true],
  ["dir", true],
  ["keep", true],
  ["older-than", true],
  ["help", false],
  ["version", false],
])
// CAC names an option by its declaration in "value is missing".
const RAW_NAMES = {
  entry: "-e, --entry <name>",
  "runtime-env-file": "--runtime-env-file <file>",
  journal: "--journal <file>",
  "runs-dir": "--runs-dir <dir>",
  from: "--from <step>",
  agent: "--agent <profile>",
  "rerun-of": "--rerun-of <runId>",
  port: "--port <port>",
  dir: "--dir <dir>",
  keep: "--keep <count>",
  "older-than": "--older-than <days>",
}
// The options each command takes; `help` and `version` are everyone's.
const SHARED = ["help", "version"]
const STUDIO_ONLY = ["port", "dir", "keep", "older-than"]
const COMMAND_OPTIONS = {
  run: new Set([...OPTIONS.keys()].filter((name) => !STUDIO_ONLY.includes(name))),
  studio: new Set([...SHARED, "port", "dir", "runs-dir"]),
  runs: new Set([...SHARED, "keep", "older-than", "dir", "runs-dir"]),
}

const SHORT = new Map([
  ["e", "entry"],
  ["h", "help"],
  ["q", "quiet"],
  ["v", "version"],
])

/**
 * Parses `argv` (without node and the script) into
 * `{ command, file, entry, runtimeEnvFile, journal, trace, captureContent, json, quiet, help, version }`.
 * Throws `CliUsageError` for unknown options, missing values and unknown commands.
 */
export function parseArgs(argv) {
  const positionals = []
  const values = new Map()
  // How each option was written, for the message when its command does not take it.
  const spelled = new Map()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg)
      continue
    }
    const long = arg.startsWith("--")
    const eq = arg.indexOf("=")
    const raw = long ? arg.slice(2, eq === -1 ? undefined : eq) : arg.slice(1, eq === -1 ? undefined : eq)
    // `-e` is the only short spelling with a value; grouped flags (`-hv`) are not supported.
    const name = long ? raw : SHORT.get(raw)
    if (name === undefined || !OPTIONS.has(name)) throw new CliUsageError(`Unknown option \`${arg.slice(0, eq === -1 ? undefined : eq)}\``)
    spelled.set(name, arg.slice(0, eq === -1 ? undefined : eq))
    if (!OPTIONS.get(name)) {
      if (eq !== -1) throw new CliUsageError(`option \`--${name}\` does not take a value`)
      values.set(name, true)
      continue
    }
    let value
    if (eq !== -1) value = arg.slice(eq + 1)
    else if (i + 1 < argv.length && !argv[i + 1].startsWith("-")) value = argv[++i]
    if (value === undefined || value === "") throw new CliUsageError(`option \`${RAW_NAMES[name]}\` value is missing`)
    // A repeated option keeps its last value, as most command-line tools do.
    values.set(name, value)
  }
  const [command, file, ...rest] = positionals
  const parsed = {
    command,
    file,
    entry: values.get("entry"),
    runtimeEnvFile: values.get("runtime-env-file"),
    journal: values.get("journal"),
    captureContent: values.get("capture-content") === true,
    trace: values.get("trace") === true || values.get("capture-content") === true,
    json: values.get("json") === true,
    quiet: values.get("quiet") === true,
    help: values.get("help") === true,
    version: values.get("version") === true,
    // docs/STUDIO.md: recording, re-runs, the studio and retention.
    runsDir: values.get("runs-dir") ?? values.get("dir"),
    // On by default (docs/STUDIO.md); AML_RECORD=0 turns it off, `--record` on again, and
    // `--no-record` wins over both.
    record: values.get("no-record") !== true && (values.get("record") === true || process.env.AML_RECORD !== "0"),
    from: values.get("from"),
    rerunOf: values.get("rerun-of"),
    port: values.get("port"),
    keep: values.get("keep"),
    olderThan: values.get("older-than"),
    subcommand: file,
  }
  if (parsed.help || parsed.version) return parsed
  if (command === undefined) return parsed
  // An option of another command is as unknown here as any other.
  const allowed = COMMAND_OPTIONS[command === "runs" ? "runs" : command]
  for (const name of values.keys()) {
    if (allowed !== undefined && !allowed.has(name)) throw new CliUsageError(`Unknown option \`${spelled.get(name)}\``)
  }
  if (command === "studio") {
    if (file !== undefined) throw new CliUsageError(`unexpected argument for command \`studio\`: ${file}`)
    return parsed
  }
  if (command === "runs") {
    if (file !== "prune") throw new CliUsageError(file === undefined ? "missing subcommand for command `runs` (prune)" : `unknown runs subcommand: ${file}`)
    if (rest.length > 0) throw new CliUsageError(`unexpected argument for command \`runs prune\`: ${rest[0]}`)
    return parsed
  }
  if (command !== "run") throw new CliUsageError(`unknown command: ${command}`)
  if (file === undefined) throw new CliUsageError("missing required args for command `run <workflowFile>`")
  if (rest.length > 0) throw new CliUsageError(`unexpected argument for command \`run <workflowFile>\`: ${rest[0]}`)
  if (parsed.from !== undefined && parsed.journal === undefined) throw new CliUsageError("option `--from <step>` needs `--journal <file>`")
  if (values.get("agent") !== undefined) {
    const choice = parseAgentChoice(values.get("agent"))
    if (choice.problem !== undefined) throw new CliUsageError(choice.problem)
    parsed.agent = choice
  }
  return parsed
}

const OPTION_HELP = `Options:
  -e, --entry <name>          Select a named export
  --runtime-env-file <file>   Apply an explicit env file last
  --trace                     Write metadata-only trace events to stderr
  --capture-content           Include sensitive content in trace output; implies --trace
  --json                      Write a JSON success envelope to stdout
  --journal <file>            Record the run in a file journal; rerunning resumes it
  --from <step>               With --journal: cut the journal before <step> and run again from there
  --agent <profile>[:<model>] Run Agents without a provider on a coding agent (opencode, codex, copilot, glm, pi)
  --runs-dir <dir>            Record runs under <dir> (default .aml/runs; AML_RUNS_DIR)
  --record                    Record the run for the studio, even with AML_RECORD=0 (the default)
  --no-record                 Do not record the run (also AML_RECORD=0)
  -q, --quiet                 Print only failures on stderr (no progress, no run lines)
  -h, --help                  Display this message
  -v, --version               Display version number`

/** CAC-shaped help text (the same for `aml --help` and `aml run --help`). */
export function helpText(version) {
  return `aml/${version}

Usage:
  $ aml run <workflowFile> [options]

Commands:
  run <workflowFile>  Load and evaluate one trusted TS, TSX, or JS AML workflow module
  studio              Serve the recorded runs on 127.0.0.1 (--port <port>, --dir <dir>)
  runs prune          Remove old recorded runs (--keep <count>, --older-than <days>, --dir <dir>)

For more info, run any command with the \`--help\` flag:
  $ aml run --help

${OPTION_HELP}
`
}

/** CAC's version line: `aml/<version> <platform>-<arch> node-<version>`. */
export function versionText(version) {
  return `aml/${version} ${process.platform}-${process.arch} node-${process.version}\n`
}
