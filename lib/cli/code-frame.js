// The offending line of a workflow that does not compile, with a caret under the column the
// compiler names, so a syntax error can be fixed without opening the file at that position.

/** Longest source line shown; a longer one (minified code) is cut around the column. */
const MAX_WIDTH = 160

/**
 * The frame for `line` and `column` (both 1-based) of `source`: two lines, `<n> | <text>`
 * and `  | <caret>`, without indentation; undefined when the position is not in `source`.
 */
export function codeFrame(source, line, column) {
  const text = source.split(/\r?\n/)[line - 1]
  if (text === undefined || column < 1) return undefined
  let start = 0
  if (text.length > MAX_WIDTH) start = Math.max(0, Math.min(column - 1 - MAX_WIDTH / 2, text.length - MAX_WIDTH))
  const shown = text.slice(start, start + MAX_WIDTH)
  // The caret keeps the line's tabs, so it sits under the column in any tab width.
  const before = shown.slice(0, Math.max(0, column - 1 - start)).replace(/[^\t]/g, " ")
  const gutter = String(line)
  return `${gutter} | ${shown}\n${" ".repeat(gutter.length)} | ${before}^`
}
