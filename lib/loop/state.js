// <Loop> state snapshots (INVENTORY LP-1, SPEC §12.1, §12.4). Every state a Loop renders
// or stages goes through `normalize`: a stable JSON object, validated by the Loop's Standard
// Schema, whose output is snapshotted and validated a second time. Both outputs must be deeply
// equal, so a schema that drifts on repeated parsing is rejected instead of making a Loop
// commit forever. Results are deeply frozen, key-sorted plain data (stable-json.js), which is
// also what makes `deepEqual` a positional walk.

import { EvaluationError } from "../errors/errors.js"
import { validate } from "../schema/standard-schema.js"
import { snapshotJson } from "../schema/stable-json.js"

const isArray = Array.isArray

/** A JSON object snapshot: not null, not an array. */
export function isJsonObject(value) {
  return typeof value === "object" && value !== null && !isArray(value)
}

/**
 * Deep equality of two stable JSON snapshots (sorted keys, no -0, no cycles), with an
 * explicit stack so deep state cannot overflow the JS stack.
 */
export function deepEqual(a, b) {
  const stack = [a, b]
  while (stack.length > 0) {
    const right = stack.pop()
    const left = stack.pop()
    if (left === right) continue
    if (!(typeof left === "object" && left !== null && typeof right === "object" && right !== null)) return false
    if (isArray(left) !== isArray(right)) return false
    const leftKeys = Object.keys(left)
    const rightKeys = Object.keys(right)
    if (leftKeys.length !== rightKeys.length) return false
    for (let i = 0; i < leftKeys.length; i++) {
      const key = leftKeys[i]
      if (key !== rightKeys[i]) return false
      stack.push(left[key], right[key])
    }
  }
  return true
}

/** The validated state pipeline of one Loop; `schema` is already captured. */
export class LoopState {
  constructor(name, schema) {
    this.label = `<Loop name="${name}"> state`
    this.schema = schema
  }

  /** One validator run: the read result, or `${label} schema validation failed`. */
  async check(value) {
    try {
      const result = validate(this.schema, value)
      return result instanceof Promise ? await result : result
    } catch (cause) {
      throw new EvaluationError(`${this.label} schema validation failed`, { cause })
    }
  }

  unstable(cause) {
    return new EvaluationError(`${this.label} schema must produce stable JSON state`, cause === undefined ? undefined : { cause })
  }

  /** The schema output of `value` as a frozen JSON object snapshot, or throws (LP-1). */
  async normalize(value) {
    const label = this.label
    let input
    try {
      input = snapshotJson(value, label)
    } catch (cause) {
      throw new EvaluationError(`${label} must contain only stable JSON`, { cause })
    }
    if (!isJsonObject(input)) throw new EvaluationError(`${label} must be a JSON object`)
    const first = await this.check(input)
    if (!first.ok) {
      const messages = first.issues.map((issue) => issue.message).join("; ")
      throw new EvaluationError(`${label} failed schema validation: ${messages}`, { cause: first.issues })
    }
    const canonical = this.snapshotOutput(first.value)
    // Committed state is fed back through the same schema next iteration: its canonical
    // output must be accepted again, unchanged.
    const second = await this.check(canonical)
    if (!second.ok) throw this.unstable(second.issues)
    if (!deepEqual(canonical, this.snapshotOutput(second.value))) throw this.unstable()
    return canonical
  }

  snapshotOutput(value) {
    let snapshot
    try {
      snapshot = snapshotJson(value, this.label)
    } catch (cause) {
      throw this.unstable(cause)
    }
    if (!isJsonObject(snapshot)) throw this.unstable()
    return snapshot
  }
}
