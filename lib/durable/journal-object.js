// The Virtual Object that keeps one workflow's AML journal in Restate (docs/DURABLE.md), keyed
// by the workflow id. `record` (exclusive, so Restate orders the writes of one workflow)
// stores a settled step under its position key: a step recorded again after a divergence
// replaces the older entry, as "the later entry wins" in docs/JOURNAL.md. `load` answers
// every entry.
//
// The attempt fence: a worker that died can have a record still on its way, landing after the
// retry (another attempt, another worker) loaded the journal; kept, it would sit beside the
// retry's own entry for the same step. So each attempt sends its own random token in
// ATTEMPT_HEADER, `load` (exclusive, because it writes) stores the loading attempt's token, and
// `record` keeps an entry only from the attempt that loaded last. Restate runs one exclusive
// handler of a key at a time, so every record is judged against the load before or after it,
// never one in between.

const PREFIX = "step:"
/** The state key holding the token of the attempt that loaded the journal last. */
const LOADED_BY = "loadedBy"

/** The ingress header that carries an attempt's token on its journal requests. */
export const ATTEMPT_HEADER = "x-aml-journal-attempt"

function checkEntry(entry) {
  if (typeof entry !== "object" || entry === null || typeof entry.key !== "string" || typeof entry.digest !== "string") {
    throw new TypeError("AML journal entries must be { key, digest, kind, value } records")
  }
}

/** The request's attempt token; a missing or empty header is no token. */
function attemptOf(ctx) {
  const token = ctx.request().headers.get(ATTEMPT_HEADER)
  return typeof token === "string" && token.length > 0 ? token : undefined
}

function refusal(key, token, holder) {
  const from = token === undefined ? `a request without the ${ATTEMPT_HEADER} header` : `attempt ${token}`
  return `AML Restate journal refused step ${key} from ${from}: attempt ${holder} has loaded this journal since, and only its records are kept`
}

/** The journal object definition named `name`, for `sdk` (the loaded Restate SDK). */
export function journalObject(sdk, name) {
  return sdk.object({
    name,
    handlers: {
      record: async (ctx, entry) => {
        try {
          checkEntry(entry)
        } catch (error) {
          // A malformed record can never succeed: retrying it would block the object.
          throw new sdk.TerminalError(error.message, { errorCode: 400 })
        }
        // No fenced load yet (holder null): nothing has read the journal under a token, so no
        // attempt can have missed this entry; kept, as before the fence. After one, only the
        // loader's token passes: a record without one cannot be told from a stale attempt's.
        const token = attemptOf(ctx)
        const holder = await ctx.get(LOADED_BY)
        if (holder !== null && token !== holder) {
          // Terminal: a stale record stays stale, and retrying it would block the object.
          throw new sdk.TerminalError(refusal(entry.key, token, holder), { errorCode: 409 })
        }
        ctx.set(PREFIX + entry.key, entry)
        return null
      },
      load: async (ctx) => {
        // A load without a token (a reader inspecting the journal, or a client without the
        // fence) reads and leaves the fence where it is.
        const token = attemptOf(ctx)
        if (token !== undefined) ctx.set(LOADED_BY, token)
        const keys = await ctx.stateKeys()
        const entries = []
        // One state read at a time: Restate's context takes its operations in order.
        for (const key of keys) if (key.startsWith(PREFIX)) entries.push(await ctx.get(key))
        return entries
      },
    },
  })
}
