// Entry of the `aml` executable (bin/aml.js). Kept free of SDK imports so `--help`,
// `--version` and usage errors start fast; `run` loads the rest on demand.
import { readFileSync } from "node:fs"

import { CliUsageError, helpText, parseArgs, versionText } from "./args.js"

function packageVersion() {
  return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version
}

/** Runs `aml` with `argv` (the arguments after the executable); resolves with the exit code. */
export async function main(argv) {
  // `aml run … | head` closes stdout early; that is the reader's choice, not a crash.
  process.stdout.on("error", (error) => {
    if (error?.code !== "EPIPE") throw error
  })
  let options
  try {
    options = parseArgs(argv)
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error
    process.stderr.write(`aml: ${error.message}\n`)
    return 1
  }
  if (options.version) {
    process.stdout.write(versionText(packageVersion()))
    return 0
  }
  if (options.help || options.command === undefined) {
    process.stdout.write(helpText(packageVersion()))
    return 0
  }
  if (options.command === "studio" || options.command === "runs") {
    const { pruneCommand, studioCommand } = await import("./studio.js")
    try {
      return await (options.command === "studio" ? studioCommand(options) : pruneCommand(options))
    } catch (error) {
      process.stderr.write(`aml: ${error.message}\n`)
      return 1
    }
  }
  const { runCommand } = await import("./run.js")
  return runCommand(options)
}
