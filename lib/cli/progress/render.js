// The lines of `aml run`'s progress block (docs/CLI.md "Progress"): one header with the
// run's elapsed time, then one line per open Agent, Script, Sandbox and Workspace with its
// own elapsed time. Pure: the caller passes the time, the terminal width and height.

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** `0.4s`, `12s`, `3m05s`: precise while short, compact once long. */
export function formatElapsed(ms) {
  const seconds = Math.max(0, ms) / 1000
  if (seconds < 10) return `${seconds.toFixed(1)}s`
  if (seconds < 60) return `${Math.floor(seconds)}s`
  const whole = Math.floor(seconds)
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s`
}

// Cut to `width` columns so no line wraps: a wrapped line would break the cursor arithmetic
// of the redraw. Code points, not UTF-16 units, so an emoji is not split in half.
function fit(line, width) {
  const chars = [...line]
  return chars.length <= width ? line : `${chars.slice(0, Math.max(0, width - 1)).join("")}…`
}

function rowText(row, now) {
  const parts = [row.label]
  if (row.detail !== undefined && row.detail !== "") parts.push(row.detail)
  if (row.turn !== undefined) parts.push(`turn ${row.turn}`)
  if (!row.acquired) parts.push("acquiring")
  return `${formatElapsed(now - row.startedAt).padStart(6)}  ${parts.join(" · ")}`
}

/**
 * The block for `tracker` at `now`: `{ width, height }` is the terminal's size. `status`
 * replaces the header's "running" (for example "stopping (SIGINT)").
 */
export function renderProgress(tracker, { now, startedAt, width, height, status = "running", frame = 0 }) {
  const lines = [`${FRAMES[frame % FRAMES.length]} aml: ${status} ${formatElapsed(now - startedAt)}`]
  const rows = [...tracker.rows.values()]
  // Keep the block well inside the screen: a block taller than the terminal cannot be redrawn.
  const room = Math.max(1, Math.min(8, height - 2))
  const shown = rows.length > room ? rows.slice(0, room - 1) : rows
  for (const row of shown) lines.push(`  ${rowText(row, now)}`)
  if (shown.length < rows.length) lines.push(`  … ${rows.length - shown.length} more`)
  return lines.map((line) => fit(line, Math.max(10, width - 1)))
}
