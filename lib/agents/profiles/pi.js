// piAgent (INVENTORY BA-5): `pi-acp` over the native `pi`, with private state (HOME, agent and
// session directories), AML permissions as Pi's `--tools` allowlist in a generated
// `pi-for-aml` wrapper, and every MCP server (authored ones and the AML bridge) routed
// through the `pi-mcp-adapter` extension, because pi-acp advertises no HTTP MCP.

import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { join } from "node:path"

import { createAcpAgentProvider } from "../acp/provider.js"
import { envRecord, oneOf, optionalString, readOptions, stringArgs, systemPrelude } from "./options.js"

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
const INSTALL =
  "Install it with `npm install --global pi-acp @earendil-works/pi-coding-agent`, or set the Pi command option"
const WRAPPER = "pi-for-aml"

/** The structured-output instruction: Pi reaches MCP tools through its `mcp` proxy tool. */
export const PI_STRUCTURED_INSTRUCTION =
  'Call the mcp tool with tool "aml_submit_result" once, with the final value in args.result. If it returns an error, correct the result and retry the call. After it accepts a result, do not call it again. Do not return a substitute JSON value only as message text.'

const MCP_NOTE =
  'AML JavaScript Tools and MCP servers are available through the mcp tool: call it with { tool: "<name>", args: { ... } }.'

/** POSIX single quoting for the wrapper script. */
const quote = (value) => `'${value.replaceAll("'", `'\\''`)}'`

/** Pi's tool allowlist for the request (SPEC 16.4; network has no Pi switch). */
function piTools(permissions, mcp) {
  const tools = ["read", "grep", "find", "ls"]
  if (permissions.filesystem !== "read-only") tools.push("edit", "write")
  if (permissions.shell) tools.push("bash")
  if (mcp) tools.push("mcp")
  return tools
}

const narrowed = (permissions) => permissions.filesystem === "read-only" || !permissions.shell

/** The adapter entry point: the option, or `pi-mcp-adapter` resolved from the process cwd. */
function adapterPath(configured, sandboxed) {
  if (configured !== undefined) return configured
  if (!sandboxed) {
    try {
      return createRequire(join(process.cwd(), "package.json")).resolve("pi-mcp-adapter")
    } catch {
      // Reported below with the same message as inside a Sandbox.
    }
  }
  throw new Error(
    "Pi MCP adapter was not found: install pi-mcp-adapter and set the Pi mcpAdapterPath option to its entry point",
  )
}

/** pi-mcp-adapter's server entry for one ACP descriptor (HTTP or stdio). */
export function adapterServer(descriptor) {
  if (descriptor.type === "http") {
    const headers = Object.fromEntries(descriptor.headers.map(({ name, value }) => [name, value]))
    return { auth: false, headers, lifecycle: "lazy", url: descriptor.url }
  }
  if (descriptor.type === undefined && typeof descriptor.command === "string") {
    const env = Object.fromEntries(descriptor.env.map(({ name, value }) => [name, value]))
    return { args: [...descriptor.args], command: descriptor.command, env, lifecycle: "lazy" }
  }
  throw new TypeError(`Pi MCP adapter cannot represent ACP-native server "${descriptor.name}"`)
}

/** pi-mcp-adapter's cache key: sha256 of its key-sorted identity record (undefined kept). */
function stable(value) {
  if (value === null || value === undefined || typeof value !== "object") return JSON.stringify(value) ?? "undefined"
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${stable(value[key])}`)
    .join(",")}}`
}

function serverHash(entry) {
  const identity = {
    args: entry.args,
    auth: entry.auth,
    bearerToken: undefined,
    bearerTokenEnv: undefined,
    command: entry.command,
    cwd: undefined,
    env: entry.env,
    excludeTools: undefined,
    exposeResources: undefined,
    headers: entry.headers,
    includeTools: undefined,
    socket: undefined,
    url: entry.url,
  }
  return createHash("sha256").update(stable(identity)).digest("hex")
}

/**
 * `agent/mcp.json` and `agent/mcp-cache.json`: every server lazy under its exact name, and
 * the bridge's Tools pre-listed in the cache so Pi can name them before connecting.
 */
function mcpFiles(servers, bridgeName, bridgeTools) {
  const mcpServers = {}
  const cached = {}
  for (const descriptor of servers) {
    const entry = adapterServer(descriptor)
    mcpServers[descriptor.name] = entry
    if (descriptor.name === bridgeName) {
      cached[descriptor.name] = { cachedAt: Date.now(), configHash: serverHash(entry), resources: [], tools: bridgeTools }
    }
  }
  const config = { mcpServers, settings: { toolPrefix: "none" } }
  return [
    { content: `${JSON.stringify(config, null, 2)}\n`, path: "agent/mcp.json" },
    { content: `${JSON.stringify({ servers: cached, version: 1 }, null, 2)}\n`, path: "agent/mcp-cache.json" },
  ]
}

/** The tools the bridge serves, in the adapter's cache shape. */
function bridgeTools(request, structured) {
  const tools = request.tools.map((tool) => ({
    description: tool.description,
    inputSchema: tool.inputSchema,
    name: tool.name,
  }))
  if (structured) {
    tools.push({
      description: "Submit the final structured result for this AML invocation.",
      inputSchema: {
        additionalProperties: false,
        properties: { result: request.output.jsonSchema },
        required: ["result"],
        type: "object",
      },
      name: "aml_submit_result",
    })
  }
  return tools
}

// pi-acp's startup information is one agent_message_chunk sent right after session/new
// (`md.join("\n").trim() + "\n"`): with `quietStartup` only its update notice, otherwise a
// `pi vX.Y.Z` / `---` header, `## Section` headings with `- item` lines, and the notice. It
// has no end marker, so its own line shapes are what is removed.
const UPDATE_NOTICE = /^New version available: v\S+ \(installed v\S+\)\. Run: `[^`\n]*`$/
const STARTUP_LINE = /^(?:|---|## .*|- .*| {2}- .*)$/

/** Removes pi-acp's startup information from the start of a turn's text. */
export function stripPiStartupInfo(text) {
  const lines = text.split("\n")
  let skip = 0
  if (/^pi v\S+$/.test(lines[0]) && lines[1] === "---") {
    skip = 2
    while (skip < lines.length - 1 && (STARTUP_LINE.test(lines[skip]) || UPDATE_NOTICE.test(lines[skip]))) skip++
  } else if (UPDATE_NOTICE.test(lines[0]) && lines.length > 1) {
    skip = 1
  }
  return skip === 0 ? text : lines.slice(skip).join("\n")
}

function prelude(system, mcp) {
  const parts = []
  const block = systemPrelude(system)
  if (block !== undefined) parts.push(block)
  if (mcp) parts.push(MCP_NOTE)
  return parts.length === 0 ? undefined : parts.join("\n\n")
}

/** The Pi ACP Agent provider (`name: "pi"`). */
export function piAgent(options) {
  const o = readOptions(options, "Pi")
  const command = optionalString(o.command, "Pi ACP command") ?? "pi-acp"
  const piCommand = optionalString(o.piCommand, "Pi command") ?? "pi"
  const model = optionalString(o.model, "Pi model")
  const mcpAdapterPath = optionalString(o.mcpAdapterPath, "Pi MCP adapter path")
  const workingDirectory = optionalString(o.workingDirectory, "Pi workingDirectory")
  const args = stringArgs(o.args, "Pi ACP")
  const env = envRecord(o.env, "Pi")
  const thinkingLevel = oneOf(o.thinkingLevel, LEVELS, "Pi thinkingLevel is unsupported")
  const profile = {
    createLaunch({ amlMcpServerName, inheritsProcessEnvironment, mcpServers, request, stateDirectory }) {
      const mcp = mcpServers.length > 0
      const files = [{ content: `${JSON.stringify({ quietStartup: true })}\n`, path: "agent/settings.json" }]
      let pi = piCommand
      if (mcp || narrowed(request.permissions)) {
        const tools = piTools(request.permissions, mcp)
        const extension = mcp ? ` -e ${quote(adapterPath(mcpAdapterPath, !inheritsProcessEnvironment))}` : ""
        pi = join(stateDirectory, WRAPPER)
        files.push({
          content: `#!/bin/sh\nexec ${quote(piCommand)} --tools ${tools.join(",")}${extension} "$@"\n`,
          executable: true,
          path: WRAPPER,
        })
      }
      if (mcp) files.push(...mcpFiles(mcpServers, amlMcpServerName, bridgeTools(request, request.output !== undefined)))
      const configuration = []
      const chosen = request.model ?? model
      if (chosen !== undefined) configuration.push({ category: "model", value: chosen })
      if (thinkingLevel !== undefined) configuration.push({ category: "thought_level", value: thinkingLevel })
      const launch = {
        args: [...args],
        command,
        configuration,
        env: {
          ...env,
          HOME: stateDirectory,
          PI_ACP_PI_COMMAND: pi,
          PI_CODING_AGENT_DIR: join(stateDirectory, "agent"),
          PI_CODING_AGENT_SESSION_DIR: join(stateDirectory, "sessions"),
          PI_SKIP_VERSION_CHECK: "1",
        },
        files,
        initialPromptPrefix: prelude(request.system, mcp),
        permissionPolicy: "allow_always",
        structuredOutputInstruction: PI_STRUCTURED_INSTRUCTION,
        transformText: stripPiStartupInfo,
      }
      if (mcp) launch.sessionMcpServers = []
      return launch
    },
    name: "pi",
    workingDirectory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
