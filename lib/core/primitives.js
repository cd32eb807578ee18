// Built-in primitives are plain functions carrying a non-enumerable
// Symbol.for("@aml-jsx/sdk/primitive-kind") marker. The runtime recognises them by that
// marker (so another SDK copy's primitives work too); calling one directly is an error.

import { primitiveKinds } from "./native.js"
import { PRIMITIVE_KIND } from "./node.js"

const TABLE = primitiveKinds()

/** Primitive kinds in engine code order (the engine owns the table). */
export const PRIMITIVE_KINDS = Object.freeze(TABLE.map(([kind]) => kind))

const CODES = new Map(PRIMITIVE_KINDS.map((kind, index) => [kind, index]))

/** The engine code of a primitive kind, or -1 for an unknown marker value. */
export function primitiveCode(kind) {
  const code = CODES.get(kind)
  return code === undefined ? -1 : code
}

/** Defines the marked function for a primitive shown to users as `<${label}>`. */
export function definePrimitive(kind, label) {
  const primitive = {
    [label]() {
      throw new Error(`<${label}> can only be evaluated by AmlRuntime`)
    },
  }[label]
  Object.defineProperty(primitive, PRIMITIVE_KIND, {
    configurable: false,
    enumerable: false,
    value: kind,
    writable: false,
  })
  return primitive
}

export const Agent = definePrimitive("agent", "Agent")
export const System = definePrimitive("system", "System")
export const FollowUp = definePrimitive("follow-up", "FollowUp")
export const Tool = definePrimitive("tool", "Tool")
export const Mcp = definePrimitive("mcp", "Mcp")
export const Skill = definePrimitive("skill", "Skill")
export const File = definePrimitive("file", "File")
export const Include = definePrimitive("include", "Include")
export const Loop = definePrimitive("loop", "Loop")
export const Parallel = definePrimitive("parallel", "Parallel")
export const Sandbox = definePrimitive("sandbox", "Sandbox")
export const Script = definePrimitive("script", "Script")
export const Workspace = definePrimitive("workspace", "Workspace")

/** Display labels used in messages, by kind. */
export const PRIMITIVE_LABELS = Object.freeze(Object.fromEntries(TABLE))
