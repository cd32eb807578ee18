// <Script> (INVENTORY SC-1) through the scope protocol of docs/ARCHITECTURE.md:
//   enter:    props are checked in the documented order and a `script` span opens (span-N);
//             a shell-form Script captures its children as private source.
//   complete: the command runs — on the host (lib/process/script-host.js) or through the active
//             Sandbox runtime, never falling back from one to the other — and its stdout
//             (untrimmed) becomes the scope's output in the surrounding channel.
// There is nothing to clean up on failure: a host process is killed and reaped before its
// run settles, and a Sandbox provider owns its own processes.

import { masked } from "../core/component-scope.js"
import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { isNormalized } from "../checks/normalized.js"
import { resolvePortablePath } from "../sandbox/portable-path.js"
import { supportsSandboxRuntime } from "../sandbox/runtime.js"
import { runOnHost } from "./script-host.js"

const SHELLS = new Set(["sh", "bash", "node"])

/** Interpreter arguments for shell-form source. */
function interpreterArgs(shell, source) {
  return shell === "node" ? ["--input-type=module", "--eval", source] : ["-c", source]
}

/**
 * Reads and checks the props in the documented order (SC-1 errors 1–9). Each prop is read
 * once. Returns the plan the completion runs.
 */
function readScriptProps(props, sandbox, hostCwd) {
  if (sandbox !== undefined && !supportsSandboxRuntime(sandbox)) {
    throw new EvaluationError(
      `<Script> cannot execute because Sandbox provider "${sandbox.provider.name}" does not enforce the effective scope`,
    )
  }
  const cwdProp = props.cwd
  let cwd
  if (sandbox === undefined) {
    cwd = cwdProp === undefined ? hostCwd : resolvePortablePath("<Script> cwd", cwdProp, hostCwd)
  } else {
    cwd = cwdProp === undefined ? sandbox.cwd : resolvePortablePath("<Script> cwd", cwdProp, sandbox.root)
  }
  const timeoutMs = props.timeoutMs
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) {
    throw propTypeError("<Script> timeoutMs must be a positive safe integer", timeoutMs)
  }
  const command = props.command
  const shell = props.shell
  if ((command === undefined) === (shell === undefined)) {
    throw new EvaluationError("<Script> requires exactly one of command or shell")
  }
  const argsProp = props.args
  if (command !== undefined) {
    if (props.children !== undefined) throw new EvaluationError("<Script command> cannot have children")
    if (!isNormalized(command)) throw propTypeError("<Script> command must be a non-empty normalized string", command)
    let args = []
    if (argsProp !== undefined) {
      if (!Array.isArray(argsProp)) throw new EvaluationError("<Script> args must contain only strings")
      args = [...argsProp]
      if (!args.every((arg) => typeof arg === "string")) {
        throw new EvaluationError("<Script> args must contain only strings")
      }
    }
    return { args, command, cwd, sandbox, shell: undefined, timeoutMs }
  }
  if (argsProp !== undefined) throw new EvaluationError("<Script shell> does not accept args")
  if (!SHELLS.has(shell)) throw propTypeError('<Script> shell must be "sh", "bash", or "node"', shell)
  return { args: undefined, command: shell, cwd, sandbox, shell, timeoutMs }
}

function startAttributes(plan) {
  const environment = plan.sandbox === undefined ? "host" : "sandbox"
  if (plan.shell === undefined) return { environment, mode: "command", command: plan.command }
  return { environment, mode: "interpreted", shell: plan.shell }
}

/**
 * Runs through `lease.runtime.exec`; the provider owns bounds, cancellation and reaping.
 * A provider that rejects a timed Script with an error named "TimeoutError" (as
 * `localSandbox` does, and as `AbortSignal.timeout()` reasons are named) reports its
 * timeout: the Script then fails as the host form does, with the provider's error as cause.
 */
async function runInSandbox(domain, plan, args) {
  const runtime = plan.sandbox.lease.runtime
  const signal = domain.signal
  const options = { cwd: plan.cwd, signal }
  if (plan.timeoutMs !== undefined) options.timeoutMs = plan.timeoutMs
  let result
  try {
    result = await domain.race(masked(async () => runtime.exec(plan.command, args, options)))
  } catch (error) {
    if (plan.timeoutMs !== undefined && !(signal.aborted && error === signal.reason) && isTimeout(error)) {
      throw new EvaluationError(`<Script> timed out after ${plan.timeoutMs} ms`, { cause: error })
    }
    throw error
  }
  return { exitCode: result.exitCode, stderr: result.stderr, stdout: result.stdout }
}

function isTimeout(error) {
  try {
    return error instanceof Error && error.name === "TimeoutError"
  } catch {
    return false
  }
}

async function completeScript(domain, task, plan, input) {
  let args = plan.args
  if (plan.shell !== undefined) {
    const source = (input[1] ?? "").trim()
    if (source.length === 0) throw new EvaluationError("<Script shell> must resolve to non-empty source")
    args = interpreterArgs(plan.shell, source)
  }
  const { exitCode, stderr, stdout } =
    plan.sandbox === undefined ? await runOnHost(domain, plan, args) : await runInSandbox(domain, plan, args)
  if (exitCode !== 0) {
    const detail = stderr.trim()
    throw new EvaluationError(`<Script> exited with code ${exitCode}${detail.length > 0 ? `: ${detail}` : ""}`)
  }
  const end = domain.tracing
    ? JSON.stringify({ exitCode, stderrLength: stderr.length, stdoutLength: stdout.length })
    : undefined
  return domain.native.scopeDone(task, stdout, end, undefined)
}

/** Enters the <Script> node on top of `task`; returns the engine's step code. */
export function enterScript(domain, task, node, slot) {
  const plan = readScriptProps(node.props, slot.env.sandbox, domain.options.cwd)
  slot.complete = (input) => completeScript(domain, task, plan, input)
  const attributes = domain.tracing ? JSON.stringify(startAttributes(plan)) : undefined
  return domain.native.enterScope(task, "script", "Script", true, plan.shell !== undefined, attributes, undefined)
}
