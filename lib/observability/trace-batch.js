// Reads the engine's trace batches (crates/aml-engine/src/trace_batch.rs has the layout) into
// the record sinks' compact records (trace-sink.js). The batch carries numbers in one
// Float64Array and strings by reference into a table this reader and the engine grow in
// step, one table per evaluation domain: decoding it costs a fraction of what parsing the
// same records as JSON did (docs/OBSERVABILITY.md "Cost").

/** Every empty attribute set (most span starts): sinks may keep attribute objects but never mutate them. */
const EMPTY = Object.freeze({})

/** crates/aml-engine/src/usage.rs USAGE_FIELDS, in order. */
const USAGE_FIELDS = ["inputTokens", "outputTokens", "totalTokens", "cachedInputTokens", "reasoningTokens"]

/** `trace-N` is 2N, `span-N` is 2N + 1. */
function spanId(encoded) {
  const n = Math.floor(encoded / 2)
  return encoded % 2 === 1 ? `span-${n}` : `trace-${n}`
}

/** An own property even for `__proto__` (as JSON.parse makes it), never the prototype. */
function set(attributes, key, value) {
  if (key === "__proto__") Object.defineProperty(attributes, key, { configurable: true, enumerable: true, value, writable: true })
  else attributes[key] = value
}

export class TraceBatchReader {
  constructor() {
    /** The domain's string table: entries are only ever appended. */
    this.table = []
    this.numbers = undefined
    this.local = undefined
    this.at = 0
  }

  /** The compact records of `batch` (`{ numbers, strings, interned }`), `content` when it carries sensitive attributes. */
  read(batch, content) {
    const { numbers, strings, interned } = batch
    const table = this.table
    for (let i = 0; i < interned; i++) table.push(strings[i])
    this.numbers = numbers
    this.local = interned === strings.length ? undefined : strings.slice(interned)
    this.at = 0
    const records = []
    const length = numbers.length
    while (this.at < length) records.push(this.record(content))
    this.numbers = undefined
    this.local = undefined
    return records
  }

  record(content) {
    const numbers = this.numbers
    const at = this.at
    const type = numbers[at]
    let record
    if (type === 1) {
      this.at = at + 5
      record = [1, spanId(numbers[at + 1]), this.text(numbers[at + 2]), numbers[at + 3] === 1, numbers[at + 4], this.attributes()]
    } else if (type === 0) {
      const parent = numbers[at + 2]
      this.at = at + 6
      record = [0, spanId(numbers[at + 1]), parent < 0 ? null : spanId(parent), this.text(numbers[at + 3]), this.text(numbers[at + 4]), numbers[at + 5], this.attributes()]
    } else {
      this.at = at + 4
      record = [2, spanId(numbers[at + 1]), this.text(numbers[at + 2]), numbers[at + 3], this.attributes()]
    }
    if (content) record.push(this.attributes())
    return record
  }

  text(reference) {
    return reference >= 0 ? this.table[reference] : this.local[-reference - 1]
  }

  attributes() {
    const numbers = this.numbers
    let at = this.at
    const count = numbers[at++]
    if (count === 0) {
      this.at = at
      return EMPTY
    }
    const attributes = {}
    for (let i = 0; i < count; i++) {
      const key = this.text(numbers[at])
      const tag = numbers[at + 1]
      at += 2
      if (tag === 2) set(attributes, key, numbers[at++])
      else if (tag === 3) set(attributes, key, this.text(numbers[at++]))
      else if (tag === 4) {
        const items = []
        for (let left = numbers[at++]; left > 0; left--) items.push(this.text(numbers[at++]))
        set(attributes, key, items)
      } else if (tag === 5) {
        // `usage` (issue 37): the five fields in the engine's order, -1 where not reported.
        const usage = {}
        for (let field = 0; field < 5; field++) {
          const count = numbers[at++]
          if (count >= 0) usage[USAGE_FIELDS[field]] = count
        }
        set(attributes, key, Object.freeze(usage))
      } else set(attributes, key, tag === 1)
    }
    this.at = at
    return attributes
  }
}
