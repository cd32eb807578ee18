// <Include path | src maxBytes> (INVENTORY INC-1, docs-next): read one UTF-8 file and put
// its text in the surrounding channel, or — above `maxBytes` — give the containing Agent a
// staged file reference with size and line metadata and a read instruction instead.
//   path: relative to the nearest active filesystem (Sandbox guest, else Workspace); a
//         read-only Sandbox may be read.
//   src:  a trusted application file resolved from AmlRuntimeOptions.cwd.
// Staging (decisions in docs/WORKSPACE.md): a guest file is already Agent-visible, so its
// reference is its path from the Sandbox cwd. Any other oversized file is copied into the
// invocation-private staging of the containing Agent's provider call (lib/skill/staging.js,
// `<os.tmpdir()>/aml-include-<uuid>/include/<name>`), removed when that call settles.

import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { basename, join, posix } from "node:path"

import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { locate, outcomeCause, readAt, readSource } from "./access.js"

const DECODER = new TextDecoder("utf-8", { fatal: true })

function readIncludeProps(props, env) {
  if (props.children !== undefined) throw new EvaluationError("<Include> does not accept children")
  const path = props.path
  const src = props.src
  if ((path === undefined) === (src === undefined)) throw new EvaluationError("<Include> requires exactly one of path or src")
  const maxBytes = props.maxBytes
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)) {
    throw propTypeError("<Include> maxBytes must be a positive safe integer", maxBytes)
  }
  if (src !== undefined) {
    if (typeof src !== "string" || src.trim().length === 0) throw propTypeError("<Include> src must be a non-empty local path", src)
    return { label: src, maxBytes, src, target: undefined }
  }
  if (env.sandbox === undefined && env.workspace === undefined) {
    throw new EvaluationError("<Include path> requires an enclosing <Workspace> or <Sandbox>")
  }
  const target = locate("<Include>", path, env)
  return { label: target.path, maxBytes, src: undefined, target }
}

async function readTarget(domain, target) {
  let outcome
  try {
    outcome = await readAt(domain, target)
  } catch (cause) {
    if (domain.signal.aborted) throw domain.signal.reason
    throw new EvaluationError(`<Include> could not read "${target.path}"`, { cause })
  }
  if (outcome.kind === "ok") return outcome.content
  if (outcome.kind === "parent") throw new EvaluationError(`<Include> parent "${outcome.segment}" is not a directory`)
  if (outcome.kind === "not-regular") throw new EvaluationError("<Include> path must identify a regular file")
  throw new EvaluationError(`<Include> could not read "${target.path}"`, { cause: outcomeCause(outcome) })
}

/** Lines as an editor counts them: a final line without a newline still counts. */
export function countLines(text) {
  if (text.length === 0) return 0
  let lines = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++
  return text.endsWith("\n") ? lines : lines + 1
}

/** The Agent-facing text of a staged Include (wording documented in docs/WORKSPACE.md). */
export function stagedInstruction(label, bytes, lines, maxBytes, path) {
  return (
    `The file "${label}" (${bytes} bytes, ${lines} lines) exceeds the ${maxBytes}-byte inline limit ` +
    `and was not inlined. Read it from "${path}" before relying on its content.`
  )
}

/** A staging package (the lib/skill/staging.js shape) holding one file for the Agent's call. */
function stagingPackage(label, bytes) {
  const root = join(tmpdir(), `aml-include-${randomUUID()}`)
  const path = join(root, "include")
  const name = basename(label) || "include.txt"
  const entry = Object.freeze({ description: "", name: `include-${randomUUID()}`, path })
  // A Buffer view of the bytes (no copy): what the native staging takes.
  const content = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { entry, file: { content, name }, include: true, root, staged: join(path, name) }
}

async function completeInclude(domain, task, plan) {
  const native = domain.native
  const bytes = plan.src === undefined ? await readTarget(domain, plan.target) : (await readSource(domain, "<Include>", plan.src)).content
  let text
  try {
    text = DECODER.decode(bytes)
  } catch (cause) {
    throw new EvaluationError(`<Include> "${plan.label}" is not valid UTF-8`, { cause })
  }
  const size = bytes.byteLength
  const lines = countLines(text)
  const end = (inlined) => (domain.tracing ? JSON.stringify({ bytes: size, inlined, lines }) : undefined)
  if (plan.maxBytes === undefined || size <= plan.maxBytes) return native.scopeDone(task, text, end(true), undefined)
  if (native.channel(task) !== "agent") throw new EvaluationError("an oversized <Include> requires a containing <Agent>")
  const session = plan.target?.sandbox
  if (session !== undefined) {
    const reference = posix.relative(session.cwd, posix.join(session.root, plan.target.path))
    return native.scopeDone(task, stagedInstruction(plan.label, size, lines, plan.maxBytes, reference), end(false), undefined)
  }
  const pkg = stagingPackage(plan.label, bytes)
  const reference = domain.skills.push(pkg) - 1
  const text2 = stagedInstruction(plan.label, size, lines, plan.maxBytes, pkg.staged)
  return native.skillDone(task, text2, pkg.entry.name, reference, end(false), undefined)
}

/** Enters the <Include> node on top of `task`; returns the engine's step code. */
export function enterInclude(domain, task, node, slot) {
  const plan = readIncludeProps(node.props, slot.env)
  slot.complete = () => completeInclude(domain, task, plan)
  const attributes = domain.tracing
    ? JSON.stringify(plan.src === undefined ? { path: plan.label } : { src: plan.label })
    : undefined
  return domain.native.enterScope(task, "include", "Include", true, false, attributes, undefined)
}
