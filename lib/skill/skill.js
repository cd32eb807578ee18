// <Skill> (INVENTORY SK-1 and the docs-next package form; user-facing rules in
// docs/SKILL.md). Three forms share one protocol:
//
// - inline (children) and file (`src` names a file): the text — file content, "\n", inline
//   content, with optional `Skill:` / `Description:` lines first — lands at the authored
//   position in the Agent prompt, or in that Agent's <System> / <FollowUp> text (SK-1).
// - package (`src` names a directory with SKILL.md): the package is read completely now,
//   registered with the nearest Agent plan, and staged only for that Agent's provider call
//   (lib/skill/package.js). The body is never inlined: the authored position receives the
//   metadata-only fallback (name, description, staged SKILL.md path).
//
// Order of work: props are checked on entry (before placement, like <Tool>), the engine
// checks placement and opens the `skill` span, children resolve first (they may contain
// Agents or write the file `src` names), and `src` is read afterwards, with no caching.

import { resolve } from "node:path"

import { EvaluationError } from "../errors/errors.js"
import { propTypeError } from "../errors/prop-error.js"
import { isNormalized } from "../checks/normalized.js"
import { readSkillSource } from "./package.js"

function checkProps(props) {
  const src = props.src
  const children = props.children
  const name = props.name
  const description = props.description
  // `undefined` is "not given": an explicit {null} child still counts as inline content.
  if (src === undefined && children === undefined) {
    throw new EvaluationError("<Skill> requires src, children, or both")
  }
  if (src !== undefined && (typeof src !== "string" || src.length === 0)) {
    throw propTypeError("<Skill> src must be a non-empty local path", src)
  }
  if (name !== undefined && !isNormalized(name)) {
    throw propTypeError("<Skill> name must be a non-empty normalized string", name)
  }
  if (description !== undefined && !isNormalized(description)) {
    throw propTypeError("<Skill> description must be a non-empty normalized string", description)
  }
  return { description, hasChildren: children !== undefined, name, src }
}

/** SK-1 text: metadata lines and a blank line, then the content. */
function withMetadata(spec, content) {
  if (content.trim() === "") throw new EvaluationError("<Skill> must resolve to non-empty text")
  let header = ""
  if (spec.name !== undefined) header += `Skill: ${spec.name}\n`
  if (spec.description !== undefined) header += `Description: ${spec.description}\n`
  return header === "" ? content : `${header}\n${content}`
}

/** The metadata-only fallback: every line ends with "\n", so following text starts anew. */
function fallbackText(entry) {
  return `Skill: ${entry.name}\nDescription: ${entry.description}\nLocation: ${entry.path}/SKILL.md\n`
}

/**
 * Package form. The SKILL.md frontmatter is the package's identity (native discovery reads
 * it), so `name` / `description` props may only repeat it, and inline children are refused:
 * the body reaches the Agent through the staged files, never through the prompt.
 */
function packageOutput(spec, pkg) {
  if (spec.hasChildren) throw new EvaluationError("<Skill> package src does not accept children")
  for (const prop of ["name", "description"]) {
    if (spec[prop] !== undefined && spec[prop] !== pkg.entry[prop]) {
      throw new EvaluationError(`<Skill> ${prop} does not match the package SKILL.md`)
    }
  }
  return fallbackText(pkg.entry)
}

async function complete(domain, task, spec, inline) {
  const native = domain.native
  let output
  let pkg
  if (spec.src === undefined) {
    output = withMetadata(spec, inline)
  } else {
    // A trusted application read: `src` resolves from AmlRuntimeOptions.cwd (absolute paths
    // stay absolute, `..` is allowed); lexical Sandbox / Workspace scopes do not rewrite it.
    const absolute = resolve(domain.options.cwd, spec.src)
    const read = await readSkillSource(domain, absolute)
    if (read.pkg !== undefined) {
      pkg = read.pkg
      output = packageOutput(spec, pkg)
    } else {
      // Anything else is read as the file form (SK-1), as the application named it.
      output = withMetadata(spec, spec.hasChildren ? `${read.text}\n${inline}` : read.text)
    }
  }
  const sensitive = domain.traceContent ? JSON.stringify({ content: output }) : undefined
  if (pkg === undefined) return native.skillDone(task, output, undefined, undefined, undefined, sensitive)
  const reference = domain.skills.push(pkg) - 1
  return native.skillDone(task, output, pkg.entry.name, reference, undefined, sensitive)
}

/** Enters a <Skill> node through the scope protocol. Returns the engine's step code. */
export function enterSkill(domain, task, node, slot) {
  const spec = checkProps(node.props)
  slot.complete = (scope) => complete(domain, task, spec, scope[1] ?? "")
  let attributes
  let sensitive
  // Attributes only matter to trace listeners: skip the JSON when nobody listens.
  if (domain.tracing) {
    attributes = JSON.stringify({ hasInlineContent: spec.hasChildren, hasSource: spec.src !== undefined })
    const content = {}
    if (spec.description !== undefined) content.description = spec.description
    if (spec.src !== undefined) content.source = spec.src
    sensitive = JSON.stringify(content)
  }
  return domain.native.enterSkill(task, spec.name ?? "Skill", attributes, sensitive)
}
