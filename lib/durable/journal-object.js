// The Virtual Object that keeps one workflow's AML journal in Restate (docs/DURABLE.md), keyed
// by the workflow id. `record` (exclusive, so Restate orders the writes of one workflow)
// stores a settled step under its position key: a step recorded again after a divergence
// replaces the older entry, as "the later entry wins" in docs/JOURNAL.md. `load` (shared, so
// it never waits behind a record) answers every entry.

const PREFIX = "step:"

function checkEntry(entry) {
  if (typeof entry !== "object" || entry === null || typeof entry.key !== "string" || typeof entry.digest !== "string") {
    throw new TypeError("AML journal entries must be { key, digest, kind, value } records")
  }
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
        ctx.set(PREFIX + entry.key, entry)
        return null
      },
      load: sdk.handlers.object.shared(async (ctx) => {
        const keys = await ctx.stateKeys()
        const entries = []
        // One state read at a time: Restate's context takes its operations in order.
        for (const key of keys) if (key.startsWith(PREFIX)) entries.push(await ctx.get(key))
        return entries
      }),
    },
  })
}
