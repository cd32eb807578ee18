// Dotenv files as Vite reads them (dotenv's grammar plus dotenv-expand's references),
// hand-written: ~100 lines instead of two dependencies on the CLI's cold path.
//
// Grammar (one assignment per line; blank lines and `#` lines are ignored):
//   [export ] KEY = value        KEY is [A-Za-z0-9_.-]+; `KEY: value` is accepted too
//   value: unquoted (trimmed, ` #…` starts a comment), or '…', "…", `…` (may span lines).
//   Inside "…", \n and \r are newlines. '…' is literal: no escapes and no expansion.
// References (not in '…'): ${NAME}, $NAME, ${NAME:-default}, ${NAME-default}; \$ is a `$`.

const LINE = /^\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*|:\s+)(.*)$/

/**
 * Parses dotenv text into ordered `{ key, value, literal }` entries (later keys win when
 * collected into an object). `literal` marks single-quoted values, which are not expanded.
 */
export function parseEnvText(text) {
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  const entries = []
  for (let i = 0; i < lines.length; i++) {
    const match = LINE.exec(lines[i])
    if (match === null) continue
    const key = match[1]
    let rest = match[2]
    const quote = rest[0]
    if (quote === '"' || quote === "'" || quote === "`") {
      // Gather lines until the closing quote; an unclosed quote is read as an unquoted value.
      let body = rest.slice(1)
      let j = i
      let close = closingQuote(body, quote)
      while (close === -1 && j + 1 < lines.length) {
        j++
        body += `\n${lines[j]}`
        close = closingQuote(body, quote)
      }
      if (close !== -1) {
        i = j
        let value = body.slice(0, close)
        if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\r/g, "\r").replace(/\\"/g, '"')
        entries.push({ key, value, literal: quote === "'" })
        continue
      }
    }
    const comment = rest.search(/(^|\s)#/)
    if (comment !== -1) rest = rest.slice(0, comment)
    entries.push({ key, value: rest.trim(), literal: false })
  }
  return entries
}

function closingQuote(body, quote) {
  for (let k = 0; k < body.length; k++) {
    if (body[k] === "\\" && quote !== "'") k++
    else if (body[k] === quote) return k
  }
  return -1
}

const REFERENCE = /(\\)?\$(?:\{([\w.]+)(?:(:?-)([^}]*))?\}|([A-Za-z_]\w*))/g

/**
 * Expands references in `value`. A name resolves to `lookup(name)` (the caller decides
 * what wins: the process environment before file values), else to the default or "".
 */
export function expandValue(value, lookup) {
  return value.replace(REFERENCE, (whole, escaped, braced, operator, fallback, bare) => {
    if (escaped !== undefined) return whole.slice(1)
    const found = lookup(braced ?? bare)
    if (operator === ":-") return found === undefined || found === "" ? expandValue(fallback, lookup) : found
    if (operator === "-") return found === undefined ? expandValue(fallback, lookup) : found
    return found ?? ""
  })
}
