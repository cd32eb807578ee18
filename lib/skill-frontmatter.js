// The SKILL.md frontmatter of a <Skill> package: just enough YAML for the two fields AML
// reads (`name`, `description`), in the forms SKILL.md files use — plain, single- or
// double-quoted scalars and `|` / `>` block scalars. Other keys (license, metadata,
// allowed-tools…) are skipped, nested or not, because only the Agent's native discovery
// reads them, from the staged copy. A full YAML parser would be a new runtime dependency
// for two strings.

// Agent Skills naming: the name is also the staged directory name, so it must be a safe,
// portable path segment.
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const MAX_NAME = 64
const MAX_DESCRIPTION = 1024

const KEY = /^([A-Za-z0-9_-]+)[ \t]*:(?:[ \t]+(.*)|)$/
const BLOCK = /^([|>])[+-]?[1-9]?[+-]?$/

function blockScalar(style, lines) {
  const body = lines.filter((line) => line.trim() !== "")
  const indent = Math.min(...body.map((line) => line.length - line.trimStart().length))
  const text = lines.map((line) => line.slice(indent))
  // Folded scalars join lines with spaces; both styles are whitespace-collapsed afterwards
  // for the description, so only the literal/folded difference of newlines matters here.
  return style === "|" ? text.join("\n") : text.join(" ")
}

/** After a quoted scalar only whitespace and a comment may follow. */
function trailerOk(rest) {
  return /^\s*(?:#.*)?$/.test(rest)
}

function scalar(raw) {
  const value = raw.trim()
  if (value.startsWith('"')) {
    // The closing quote is the first one not escaped by a backslash.
    const close = /^"(?:[^"\\]|\\.)*"/.exec(value)
    if (close === null || !trailerOk(value.slice(close[0].length))) return undefined
    // YAML double-quoted escapes are a superset of JSON's for everything SKILL.md uses.
    try {
      return JSON.parse(close[0])
    } catch {
      return undefined
    }
  }
  if (value.startsWith("'")) {
    // Inside single quotes, '' is an escaped quote.
    const close = /^'(?:[^']|'')*'/.exec(value)
    if (close === null || !trailerOk(value.slice(close[0].length))) return undefined
    return close[0].slice(1, -1).replaceAll("''", "'")
  }
  // Plain scalar: a " #" starts a comment.
  const comment = value.search(/\s#/)
  return (comment < 0 ? value : value.slice(0, comment)).trim()
}

/** Top-level string fields of the frontmatter, or a problem message. */
function fields(lines) {
  const result = new Map()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.trim() === "" || line.trimStart().startsWith("#") || /^\s/.test(line)) continue
    const match = KEY.exec(line)
    if (match === null) return `line ${i + 2} is not a "key: value" entry`
    const raw = match[2] ?? ""
    // Indented lines after a key belong to it (a block scalar, a nested map or a list).
    let end = i + 1
    while (end < lines.length && (lines[end].trim() === "" || /^\s/.test(lines[end]))) end++
    const block = BLOCK.exec(raw.trim())
    // `null` stands for a value that is not a string (a nested map or list, or nothing).
    let value = null
    if (block !== null) {
      value = end > i + 1 ? blockScalar(block[1], lines.slice(i + 1, end)) : ""
    } else if (raw.trim() !== "") {
      // A multi-line flow scalar: indented continuation lines fold into single spaces.
      const continued = lines.slice(i + 1, end).map((next) => next.trim())
      value = scalar([raw, ...continued].filter((part) => part !== "").join(" "))
      if (value === undefined) return `frontmatter field "${match[1]}" is not a valid YAML string`
    }
    i = end - 1
    if (result.has(match[1])) return `frontmatter field "${match[1]}" appears twice`
    result.set(match[1], value)
  }
  return result
}

/**
 * Parses SKILL.md `text`. Returns `{ name, description }` (the description with whitespace
 * runs collapsed to one space, so it fits the one-line fallback) or `{ problem }`.
 */
export function parseSkillManifest(text) {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  if (lines[0].trimEnd() !== "---") return { problem: "it must start with YAML frontmatter (---)" }
  const close = lines.findIndex((line, i) => i > 0 && (line.trimEnd() === "---" || line.trimEnd() === "..."))
  if (close < 0) return { problem: "its YAML frontmatter is not closed (---)" }
  const found = fields(lines.slice(1, close))
  if (typeof found === "string") return { problem: found }
  const name = found.get("name")
  if (typeof name !== "string" || name.length > MAX_NAME || !NAME.test(name)) {
    return { problem: `name must be 1-${MAX_NAME} lowercase letters, digits and single hyphens` }
  }
  const description = (found.get("description") ?? "").replace(/\s+/g, " ").trim()
  if (description === "") return { problem: "description must be non-empty text" }
  if (description.length > MAX_DESCRIPTION) {
    return { problem: `description must be at most ${MAX_DESCRIPTION} characters` }
  }
  return { description, name }
}
