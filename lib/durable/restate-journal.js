// An AmlJournal kept in a Restate Virtual Object (docs/DURABLE.md): entries() loads every
// step recorded by any attempt of the workflow, append() records one and resolves once
// Restate stored it, so the step is durable before the workflow goes on. The HTTP client is
// Rust's (crates/aml-restate); the object's handlers are lib/durable/journal-object.js.

import { restateJournalClose, restateJournalLoad, restateJournalOpen, restateJournalRecord } from "../core/native.js"

const DEFAULT_TIMEOUT_MS = 30_000

function failed(what, error) {
  return new Error(`AML Restate journal could not ${what}: ${error.message}`)
}

/**
 * `{ ingress, object, key, headers?, timeoutMs? }`: the object `object` keyed `key` behind the
 * Restate ingress URL `ingress`. Call close() once the evaluation settled.
 */
export function createRestateJournal(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("Restate journal options must be an object")
  const { ingress, object, key } = options
  for (const [name, value] of [["ingress", ingress], ["object", object], ["key", key]]) {
    if (typeof value !== "string" || value.length === 0) throw new TypeError(`Restate journal ${name} must be a non-empty string`)
  }
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) => [name, String(value)])
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError("Restate journal timeoutMs must be a positive integer")
  let handle
  try {
    handle = restateJournalOpen(ingress, object, key, headers, timeoutMs)
  } catch (error) {
    throw new TypeError(`Restate journal ${error.message}`)
  }
  return Object.freeze({
    async entries() {
      let text
      try {
        text = await restateJournalLoad(handle)
      } catch (error) {
        throw failed(`load ${object}/${key}`, error)
      }
      return JSON.parse(text)
    },
    async append(entry) {
      try {
        await restateJournalRecord(handle, JSON.stringify(entry))
      } catch (error) {
        throw failed(`record step ${entry.key}`, error)
      }
    },
    close() {
      restateJournalClose(handle)
    },
  })
}
