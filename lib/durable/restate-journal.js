// An AmlJournal kept in a Restate Virtual Object (docs/DURABLE.md): entries() loads every
// step recorded by any attempt of the workflow, append() records one and resolves once
// Restate stored it, so the step is durable before the workflow goes on. The HTTP client is
// Rust's (crates/aml-restate); the object's handlers are lib/durable/journal-object.js.

import { restateJournalClose, restateJournalLoad, restateJournalOpen, restateJournalRecord } from "../core/native.js"
import { ATTEMPT_HEADER } from "./journal-object.js"

const DEFAULT_TIMEOUT_MS = 30_000

function failed(what, error) {
  return new Error(`AML Restate journal could not ${what}: ${error.message}`)
}

/**
 * `options.headers` as pairs, plus `options.attempt` (the attempt's fence token) as
 * ATTEMPT_HEADER, over any header of that name.
 */
function requestHeaders(options) {
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) => [name, String(value)])
  const attempt = options.attempt
  if (attempt === undefined) return headers
  if (typeof attempt !== "string" || attempt.length === 0) throw new TypeError("Restate journal attempt must be a non-empty string")
  return [...headers.filter(([name]) => name.toLowerCase() !== ATTEMPT_HEADER), [ATTEMPT_HEADER, attempt]]
}

/**
 * `{ ingress, object, key, headers?, timeoutMs?, attempt? }`: the object `object` keyed `key`
 * behind the Restate ingress URL `ingress`. `attempt` is a token unique to this attempt: with
 * it, the object keeps this journal's records only while no other attempt has loaded since
 * (the fence in journal-object.js). Call close() once the evaluation settled.
 */
export function createRestateJournal(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("Restate journal options must be an object")
  const { ingress, object, key } = options
  for (const [name, value] of [["ingress", ingress], ["object", object], ["key", key]]) {
    if (typeof value !== "string" || value.length === 0) throw new TypeError(`Restate journal ${name} must be a non-empty string`)
  }
  const headers = requestHeaders(options)
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
