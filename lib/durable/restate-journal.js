// An AmlJournal kept in a Restate Virtual Object (docs/DURABLE.md): entries() loads what this
// run recorded (every attempt of it), append() records one step and resolves once Restate
// stored it, so the step is durable before the workflow goes on. The protocol — headers,
// sealing with the workers' secret, paged loads, size bounds, failure classes — is Rust's
// (crates/aml-restate); the object's handlers are lib/durable/journal-object.js.

import {
  restateJournalClose,
  restateJournalLoad,
  restateJournalOpen,
  restateJournalProtocol,
  restateJournalRecord,
} from "../core/native.js"

const DEFAULT_TIMEOUT_MS = 30_000
/** The longest timeout the boundary carries (a u32 of milliseconds: about 49.7 days). */
export const MAX_TIMEOUT_MS = 2 ** 32 - 1

export const PROTOCOL = Object.freeze(restateJournalProtocol())

/** A journal failure as an Error whose `code` is its class (describeFailure reads it). */
function failed(what, failure) {
  const error = new Error(`AML Restate journal could not ${what}: ${failure.message}`)
  error.code = failure.failure
  return error
}

/**
 * The checked options for restateJournalOpen, named in messages as `names` says: the same
 * rules for createRestateJournal and amlWorkflow (which checks them before any attempt runs).
 */
export function journalOptions(options, names) {
  const { subject } = names
  const { headers, secret, timeoutMs = DEFAULT_TIMEOUT_MS } = options
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new TypeError(`${subject} ${names.timeoutMs} must be a positive integer of milliseconds up to ${MAX_TIMEOUT_MS}`)
  }
  if (headers !== undefined && (typeof headers !== "object" || headers === null || Array.isArray(headers) || Object.values(headers).some((value) => typeof value !== "string"))) {
    throw new TypeError(`${subject} ${names.headers} must be an object of header names to string values`)
  }
  if (typeof secret !== "string" || secret.length < PROTOCOL.minSecretChars) {
    throw new TypeError(`${subject} ${names.secret} must be a string of at least ${PROTOCOL.minSecretChars} characters${names.secretHint ?? ""}`)
  }
  const { attempt, run = "" } = options
  if (attempt !== undefined && (typeof attempt !== "string" || attempt.length === 0)) {
    throw new TypeError(`${subject} attempt must be a non-empty string`)
  }
  if (typeof run !== "string") throw new TypeError(`${subject} run must be a string`)
  return {
    attempt,
    headers: Object.entries(headers ?? {}),
    ingress: options.ingress,
    key: options.key,
    object: options.object,
    run,
    secret,
    timeoutMs,
  }
}

/** Opens the native journal; its own checks (the ingress URL, header names) become TypeErrors. */
export function openJournal(checked, names) {
  try {
    return restateJournalOpen(checked)
  } catch (error) {
    const what = String(error.message).startsWith("header ") ? `${names.headers}: ` : ""
    throw new TypeError(`${names.subject} ${what}${error.message}`)
  }
}

const NAMES = Object.freeze({ subject: "Restate journal", headers: "headers", secret: "secret", timeoutMs: "timeoutMs" })

/**
 * `{ ingress, object, key, secret, headers?, timeoutMs?, run?, attempt? }`: the object `object`
 * keyed `key` behind the Restate ingress URL `ingress`, sealed with `secret` (shared by every
 * worker of the deployment). `run` names one run of the workflow: a journal holds one run's
 * entries. `attempt` is a token unique to one attempt: with it, the object keeps records only
 * from the attempt that loaded last (the fence). Call close() once the evaluation settled.
 */
export function createRestateJournal(options) {
  if (typeof options !== "object" || options === null) throw new TypeError("Restate journal options must be an object")
  for (const name of ["ingress", "object", "key"]) {
    const value = options[name]
    if (typeof value !== "string" || value.length === 0) throw new TypeError(`Restate journal ${name} must be a non-empty string`)
  }
  const handle = openJournal(journalOptions(options, NAMES), NAMES)
  const { object, key } = options
  return Object.freeze({
    async entries() {
      const answer = JSON.parse(await restateJournalLoad(handle))
      if (answer.failure !== undefined) throw failed(`load ${object}/${key}`, answer)
      if (answer.ignored > 0) {
        process.emitWarning(
          `AML Restate journal ${object}/${key} holds ${answer.ignored} ${answer.ignored === 1 ? "entry" : "entries"} that no worker of this deployment recorded for this run (forged, malformed or sealed with another secret); they are ignored and their steps run again`,
          { code: "AML_JOURNAL_IGNORED" },
        )
      }
      return answer.entries
    },
    async append(entry) {
      const outcome = await restateJournalRecord(handle, JSON.stringify(entry))
      if (outcome !== null) throw failed(`record step ${entry.key}`, JSON.parse(outcome))
    },
    close() {
      restateJournalClose(handle)
    },
  })
}
