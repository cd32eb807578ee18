// defineMcpServer() (INVENTORY MCP-1) and the realm MCP server registry (RT-4).
//
// A descriptor is plain frozen data: `{ name, transport }` plus a non-enumerable
// `__amlMcpServer: true`. Its exact identity is registered in the realm WeakMap, so
// `<Mcp use>` accepts only objects some SDK copy made here, never a structural lookalike.
// Every authority-bearing field is read exactly once (a getter cannot answer differently
// later) and arrays and records are copied, so later mutation of the input changes nothing.
// No I/O happens here: the Agent provider owns connections.

import { isNormalized } from "../checks/normalized.js"
import { realmSingleton } from "../core/realm.js"

export const mcpServerRegistry = realmSingleton(
  "@aml-jsx/sdk/mcp-server-registry",
  () => new WeakMap(),
  (value) => value instanceof WeakMap,
  "AML MCP server registry has an invalid global value",
)

/** True only for the exact identity of a descriptor made by defineMcpServer() in this realm. */
export function isMcpServer(value) {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false
  return mcpServerRegistry.has(value)
}

/**
 * Runs `read` (user-controlled property access: getters, Proxy traps); anything it throws
 * becomes `TypeError(message)` with the original error as the cause.
 */
function readable(read, message) {
  try {
    return read()
  } catch (cause) {
    throw new TypeError(message, { cause })
  }
}

function isObject(value) {
  return typeof value === "object" && value !== null
}

/** A frozen copy of an array (or undefined for anything else), indices read once each. */
function copyArray(value) {
  if (!Array.isArray(value)) return undefined
  const length = value.length
  const copy = new Array(length)
  for (let index = 0; index < length; index++) copy[index] = value[index]
  return copy
}

/**
 * A frozen copy of a string record (`env`, `headers`): own enumerable string keys, each
 * value read once. Arrays are not records. Object.fromEntries defines data properties, so
 * a `__proto__` key stays an ordinary key.
 */
function copyRecord(value, invalid, unreadable) {
  if (!isObject(value) || readable(() => Array.isArray(value), unreadable)) throw new TypeError(invalid)
  const entries = readable(() => Object.keys(value).map((key) => [key, value[key]]), unreadable)
  if (!entries.every(([, entry]) => typeof entry === "string")) throw new TypeError(invalid)
  return Object.freeze(Object.fromEntries(entries))
}

function stdioTransport(transport) {
  const unreadable = "MCP stdio transport must be readable"
  const { args, command, cwd, env } = readable(() => {
    const command = transport.command
    const rawArgs = transport.args
    const cwd = transport.cwd
    const env = transport.env
    // Arrays are copied while reading, so a hostile element getter fails as unreadable.
    return { args: rawArgs === undefined ? undefined : (copyArray(rawArgs) ?? rawArgs), command, cwd, env }
  }, unreadable)
  if (!isNormalized(command)) throw new TypeError("MCP stdio command must be a non-empty normalized string")
  if (cwd !== undefined && !isNormalized(cwd)) throw new TypeError("MCP stdio cwd must be a non-empty normalized string")
  if (args !== undefined && (!Array.isArray(args) || !args.every((arg) => typeof arg === "string"))) {
    throw new TypeError("MCP stdio args must be an array of strings")
  }
  const normalized = { type: "stdio", command }
  if (args !== undefined) normalized.args = Object.freeze(args)
  if (cwd !== undefined) normalized.cwd = cwd
  if (env !== undefined) {
    normalized.env = copyRecord(env, "MCP stdio env must be an object of strings", "MCP stdio env must be readable")
  }
  return normalized
}

/** The url as text: a string as authored, a URL object as its href. */
function urlText(url) {
  if (typeof url === "string") return url
  // `instanceof` walks a (possibly hostile) prototype chain and `href` is a brand-checked
  // getter: whatever fails there is simply not a URL.
  try {
    return url instanceof URL ? url.href : undefined
  } catch {
    return undefined
  }
}

function httpUrl(url) {
  const text = urlText(url)
  if (typeof text !== "string") throw new TypeError("MCP Streamable HTTP url must be a string or URL")
  let parsed
  try {
    parsed = new URL(text)
  } catch {
    throw new TypeError("MCP Streamable HTTP url must be an absolute URL")
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError("MCP Streamable HTTP url must use http or https")
  }
  return text
}

function httpTransport(transport) {
  const { headers, url } = readable(
    () => ({ url: transport.url, headers: transport.headers }),
    "MCP Streamable HTTP transport must be readable",
  )
  const normalized = { type: "streamable-http", url: httpUrl(url) }
  if (headers !== undefined) {
    normalized.headers = copyRecord(
      headers,
      "MCP Streamable HTTP headers must be an object of strings",
      "MCP Streamable HTTP headers must be readable",
    )
  }
  return normalized
}

function captureTransport(transport) {
  if (!isObject(transport)) throw new TypeError("MCP server transport must be an object")
  const type = readable(() => transport.type, "MCP server transport must be readable")
  if (type === "stdio") return stdioTransport(transport)
  if (type === "streamable-http") return httpTransport(transport)
  throw new TypeError('MCP server transport type must be "stdio" or "streamable-http"')
}

/** Validates, snapshots and freezes an MCP server descriptor (see the header). */
export function defineMcpServer(options) {
  if (!isObject(options)) throw new TypeError("MCP server definition must be an object")
  const { name, transport } = readable(
    () => ({ name: options.name, transport: options.transport }),
    "MCP server definition must be readable",
  )
  if (!isNormalized(name)) throw new TypeError("MCP server name must be a non-empty normalized string")
  const server = { name, transport: Object.freeze(captureTransport(transport)) }
  Object.defineProperty(server, "__amlMcpServer", { value: true })
  Object.freeze(server)
  mcpServerRegistry.set(server, true)
  return server
}
