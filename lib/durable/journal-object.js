// The Virtual Object that keeps one workflow run's AML journal in Restate (docs/DURABLE.md),
// keyed by the workflow id. State: `fence` ({ run, holder }: the run the journal belongs to and
// the attempt that loaded last, in one key so a record reads one small value) and one
// `step:<key>` per entry, so a record touches only its own entry: with lazy state Restate
// ships no other entry to the handler, and a record costs what its entry costs.
//
// Runs: a workflow id can run again after Restate purged it. `load` for another run clears the
// older run's state first, and `record`/`page` for another run are refused, so a new run never
// replays what an old one recorded. The workflow sends `clear` when its run ends.
//
// The attempt fence: a worker that died can have a record still on its way, landing after the
// retry loaded the journal. Each attempt sends its own random token; `load` (exclusive, because
// it writes) stores the loading attempt's token, and `record` keeps an entry only from the
// attempt that loaded last. Restate runs one exclusive handler of a key at a time, so every
// record is judged against the load before or after it, never one in between.
//
// Trust: entries arrive sealed with the workers' secret (crates/aml-restate/src/seal.rs); the
// object cannot check the seal and does not need to: the loader ignores what does not open.
// The object refuses what breaks the stored shape, by the loader's own rule.

import { restateJournalEntryProblem } from "../core/native.js"
import { PROTOCOL } from "./restate-journal.js"

const PREFIX = "step:"
const FENCE = "fence"

/** The ingress header that carries an attempt's token on its journal requests. */
export const ATTEMPT_HEADER = PROTOCOL.attemptHeader

function header(ctx, name) {
  const value = ctx.request().headers.get(name)
  return typeof value === "string" && value.length > 0 ? value : undefined
}

/** The request's run; a request without one belongs to the run "" (a journal used alone). */
const runOf = (ctx) => header(ctx, PROTOCOL.runHeader) ?? ""

function fenced(key, token, holder) {
  const from = token === undefined ? `a request without the ${ATTEMPT_HEADER} header` : `attempt ${token}`
  return `AML Restate journal refused step ${key} from ${from}: attempt ${holder} has loaded this journal since, and only its records are kept`
}

function otherRun(what, run, held) {
  return `AML Restate journal refused ${what} of run ${run || "(none)"}: the journal holds run ${held || "(none)"}`
}

/** A page: the next position (u64, big-endian; all ones for none), then a u32 length and the bytes of each entry. */
function pageFrames(entries, next) {
  const head = Buffer.alloc(8)
  head.writeBigUInt64BE(next === null ? 0xffffffffffffffffn : BigInt(next))
  const parts = [head]
  for (const entry of entries) {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(entry.length)
    parts.push(length, entry)
  }
  return Buffer.concat(parts)
}

/** `{ run, holder }`: `run` null before anything was kept, `holder` null before a fenced load. */
async function fenceOf(ctx) {
  const fence = await ctx.get(FENCE)
  return { run: typeof fence?.run === "string" ? fence.run : null, holder: typeof fence?.holder === "string" ? fence.holder : null }
}

/** The sorted step keys: pages are positions in this order. */
async function stepKeys(ctx) {
  return (await ctx.stateKeys()).filter((key) => key.startsWith(PREFIX)).sort()
}

/** The journal object definition named `name`, for `sdk` (the loaded Restate SDK). */
export function journalObject(sdk, name) {
  const refuse = (message, errorCode) => new sdk.TerminalError(message, { errorCode })
  return sdk.object({
    name,
    options: { enableLazyState: true },
    handlers: {
      record: async (ctx, entry) => {
        const problem = restateJournalEntryProblem(JSON.stringify(entry ?? null))
        // A malformed record can never succeed: retrying it would block the object.
        if (problem !== null) throw refuse(problem, 400)
        const run = runOf(ctx)
        const { run: held, holder } = await fenceOf(ctx)
        // Terminal: a record of another run, or of a stale attempt, stays refused, and
        // retrying it would block the object.
        if (held !== null && held !== run) throw refuse(otherRun(`step ${entry.key}`, run, held), 409)
        // No fenced load yet (holder null): nothing has read the journal under a token, so no
        // attempt can have missed this entry. After one, only the loader's token passes.
        const token = header(ctx, ATTEMPT_HEADER)
        if (holder !== null && token !== holder) throw refuse(fenced(entry.key, token, holder), 409)
        if (held === null) ctx.set(FENCE, { run, holder })
        ctx.set(PREFIX + entry.key, entry)
        return null
      },
      load: async (ctx) => {
        const run = runOf(ctx)
        const fence = await fenceOf(ctx)
        const newRun = fence.run !== null && fence.run !== run
        if (newRun) ctx.clearAll()
        // A load without a token (a reader inspecting the journal) leaves the fence as it is.
        const token = header(ctx, ATTEMPT_HEADER)
        ctx.set(FENCE, { run, holder: token ?? (newRun ? null : fence.holder) })
        return { count: (await stepKeys(ctx)).length }
      },
      // Shared: pages are read-only and run beside the exclusive handlers. While an attempt
      // pages, only it may record, and it records after it loaded, so the keys hold still.
      // The answer is frames of the stored bytes as they are (serde.binary, the format in
      // crates/aml-restate/src/page.rs): a page of large answers is neither parsed nor
      // re-serialized here, and a stored value that is not even JSON is one more frame that
      // the loader ignores.
      page: sdk.handlers.object.shared({ output: sdk.serde.binary }, async (ctx, request) => {
        const run = runOf(ctx)
        const held = (await fenceOf(ctx)).run ?? ""
        if (held !== run) throw refuse(otherRun("a load", run, held), 409)
        const from = Number.isSafeInteger(request?.from) && request.from >= 0 ? request.from : 0
        const keys = await stepKeys(ctx)
        const entries = []
        let total = 0
        let next = from
        // At least one entry a page, then as many as fit in PROTOCOL.pageBytes. Read as bytes:
        // state written past the handlers (Restate's admin API) may not even be JSON, and must
        // not make the journal unloadable: the loader ignores whatever breaks the entry rule.
        while (next < keys.length) {
          const bytes = await ctx.get(keys[next], sdk.serde.binary)
          const size = bytes === null ? 0 : bytes.length
          if (entries.length > 0 && total + size > PROTOCOL.pageBytes) break
          next++
          if (bytes === null) continue
          total += size
          entries.push(bytes)
        }
        return pageFrames(entries, next < keys.length ? next : null)
      }),
      clear: async (ctx, request) => {
        // Only the run that ends clears: a late clear never removes a newer run's journal.
        const { run: held } = await fenceOf(ctx)
        if (held !== null && held === request?.run) ctx.clearAll()
        return null
      },
    },
  })
}
