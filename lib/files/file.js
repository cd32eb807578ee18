// <File> (INVENTORY FL-1 with its docs-next extensions) through the scope protocol:
//   enter:    the documented checks, in order, before any child runs; a `file` span
//             (span-N, attribute `path`) opens and the children become private content.
//   complete: the content (children, or the application file `src`) replaces one file on
//             the nearest active filesystem — a read-write Sandbox guest, else the Workspace
//             materialization — atomically; the File contributes no text.
// With a serial Workspace, a host write holds the materialization's write permit, so it
// never interleaves with a writable Sandbox sibling.

import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { locate, outcomeCause, readSource, writeAt } from "./access.js"
import { acquireWritePermit } from "../sandbox/write-permit.js"

const DECODER = new TextDecoder("utf-8", { fatal: true })

function readFileProps(props, env) {
  const sandbox = env.sandbox
  if (sandbox === undefined && env.workspace === undefined) {
    throw new EvaluationError("<File> requires an enclosing <Workspace> or <Sandbox>")
  }
  if (sandbox !== undefined && sandbox.access !== "read-write") {
    throw new EvaluationError("<File> cannot write inside a read-only <Sandbox>")
  }
  const children = props.children
  const src = props.src
  if (children !== undefined && src !== undefined) throw new EvaluationError("<File> accepts children or src, not both")
  if (children === undefined && src === undefined) throw new EvaluationError("<File> requires children or src")
  if (src !== undefined && (typeof src !== "string" || src.trim().length === 0)) {
    throw propTypeError("<File> src must be a non-empty local path", src)
  }
  return { src, target: locate("<File>", props.path, env) }
}

async function contentOf(domain, plan, input) {
  if (plan.src === undefined) return input[1] ?? ""
  const { absolute, content } = await readSource(domain, "<File>", plan.src)
  try {
    return DECODER.decode(content)
  } catch (cause) {
    throw new EvaluationError(`<File> src "${absolute}" is not valid UTF-8`, { cause })
  }
}

async function write(domain, target, content) {
  const workspace = target.workspace
  const serial = target.sandbox === undefined && workspace.writeConcurrency === "serial"
  const permit = serial ? await acquireWritePermit(workspace, (p) => domain.race(p)) : undefined
  try {
    return await writeAt(domain, target, content)
  } finally {
    permit?.()
  }
}

async function completeFile(domain, task, plan, input) {
  const target = plan.target
  const content = await contentOf(domain, plan, input)
  let outcome
  try {
    outcome = await write(domain, target, content)
  } catch (cause) {
    if (domain.signal.aborted) throw domain.signal.reason
    throw new EvaluationError(`<File> could not write "${target.path}"`, { cause })
  }
  if (outcome.kind === "parent") throw new EvaluationError(`<File> parent "${outcome.segment}" is not a directory`)
  if (outcome.kind === "not-regular") throw new EvaluationError("<File> destination must be a regular file")
  if (outcome.kind !== "ok") {
    throw new EvaluationError(`<File> could not write "${target.path}"`, { cause: outcomeCause(outcome) })
  }
  const end = domain.tracing ? JSON.stringify({ path: target.path }) : undefined
  return domain.native.scopeDone(task, "", end, undefined)
}

/** Enters the <File> node on top of `task`; returns the engine's step code. */
export function enterFile(domain, task, node, slot) {
  const plan = readFileProps(node.props, slot.env)
  slot.complete = (input) => completeFile(domain, task, plan, input)
  const attributes = domain.tracing ? JSON.stringify({ path: plan.target.path }) : undefined
  return domain.native.enterScope(task, "file", "File", true, true, attributes, undefined)
}
