// defineMcpServer() (INVENTORY MCP-1, RT-4 registry): normalised frozen descriptors, one read
// per field, snapshots of arrays and records, URL → href, and every documented TypeError.
// Granting with <Mcp> is in mcp.spec.tsx.
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "vitest"

import { EvaluationError, defineMcpServer } from "@aml-jsx/sdk"

const REGISTRY = Symbol.for("@aml-jsx/sdk/mcp-server-registry")

/** The TypeError `defineMcpServer(options)` throws (never an EvaluationError). */
function definitionError(options: unknown): any {
  try {
    defineMcpServer(options as never)
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError)
    expect(error).not.toBeInstanceOf(EvaluationError)
    return error
  }
  throw new Error("expected defineMcpServer to throw")
}

const throwing = (key: string, extra: object = {}) =>
  Object.defineProperty({ ...extra }, key, {
    enumerable: true,
    get() {
      throw new Error(`boom ${key}`)
    },
  })

const stdio = (transport: object) => ({ name: "local", transport: { command: "srv", type: "stdio", ...transport } })
const http = (transport: object) => ({ name: "remote", transport: { type: "streamable-http", url: "https://x.test/mcp", ...transport } })

describe("descriptors", () => {
  it("normalises a stdio transport into a deeply frozen, registered descriptor", () => {
    const args = ["--root", "/workspace"]
    const env = { LOG_LEVEL: "warn" }
    const server = defineMcpServer({
      name: "project",
      transport: { args, command: "project-mcp", cwd: "/workspace", env, type: "stdio" },
    })
    expect(Object.keys(server)).toEqual(["name", "transport"])
    expect(Object.keys(server.transport)).toEqual(["type", "command", "args", "cwd", "env"])
    expect(server).toEqual({
      name: "project",
      transport: { args: ["--root", "/workspace"], command: "project-mcp", cwd: "/workspace", env: { LOG_LEVEL: "warn" }, type: "stdio" },
    })
    const brand = Object.getOwnPropertyDescriptor(server, "__amlMcpServer")!
    expect(brand).toEqual({ configurable: false, enumerable: false, value: true, writable: false })
    expect(server.__amlMcpServer).toBe(true)
    const transport = server.transport as any
    for (const value of [server, transport, transport.args, transport.env]) expect(Object.isFrozen(value)).toBe(true)
    // Snapshots: later mutation of the input changes nothing.
    args.push("--evil")
    env.LOG_LEVEL = "debug"
    expect(transport.args).toEqual(["--root", "/workspace"])
    expect(transport.args).not.toBe(args)
    expect(transport.env).toEqual({ LOG_LEVEL: "warn" })
    expect((globalThis as any)[REGISTRY].has(server)).toBe(true)
  })

  it("omits optional stdio members that were not given, and copies empty ones", () => {
    expect(Object.keys(defineMcpServer(stdio({})).transport)).toEqual(["type", "command"])
    const server = defineMcpServer(stdio({ args: [], cwd: undefined, env: {} }))
    expect(server.transport).toEqual({ args: [], command: "srv", env: {}, type: "stdio" })
  })

  it("keeps a string url as authored, turns a URL into its href and snapshots headers", () => {
    const headers = { Authorization: "Bearer t" }
    const fromString = defineMcpServer(http({ headers }))
    expect(Object.keys(fromString.transport)).toEqual(["type", "url", "headers"])
    headers.Authorization = "changed"
    expect(fromString.transport).toEqual({ headers: { Authorization: "Bearer t" }, type: "streamable-http", url: "https://x.test/mcp" })
    expect(Object.isFrozen((fromString.transport as any).headers)).toBe(true)
    const fromUrl = defineMcpServer(http({ url: new URL("HTTPS://Billing.Example.com/mcp") }))
    expect(fromUrl.transport).toEqual({ type: "streamable-http", url: "https://billing.example.com/mcp" })
    expect(defineMcpServer(http({ url: "http://127.0.0.1:8080/mcp" })).transport).toMatchObject({ url: "http://127.0.0.1:8080/mcp" })
  })

  it("treats a __proto__ record key as an ordinary key and ignores symbol keys", () => {
    const env = JSON.parse('{"__proto__": "x", "A": "b"}')
    env[Symbol("hidden")] = "s"
    const transport = defineMcpServer(stdio({ env })).transport as any
    expect(Object.getPrototypeOf(transport.env)).toBe(Object.prototype)
    expect(Object.keys(transport.env)).toEqual(["__proto__", "A"])
    expect(Object.getOwnPropertySymbols(transport.env)).toEqual([])
  })

  it("reads each authority-bearing field exactly once", () => {
    const reads: string[] = []
    const counted = <T extends object>(label: string, target: T) =>
      new Proxy(target, {
        get(object, key, receiver) {
          reads.push(`${label}.${String(key)}`)
          return Reflect.get(object, key, receiver)
        },
      })
    const server = defineMcpServer(
      counted("options", { name: "n", transport: counted("transport", { args: ["a"], command: "c", cwd: "/w", env: { K: "v" }, type: "stdio" }) }) as never,
    )
    expect(reads).toEqual([
      "options.name",
      "options.transport",
      "transport.type",
      "transport.command",
      "transport.args",
      "transport.cwd",
      "transport.env",
    ])
    expect(server.transport).toMatchObject({ args: ["a"], command: "c" })
    let urlReads = 0
    const options = { name: "h", transport: { get type() { return "streamable-http" }, get url() { urlReads++; return "https://x.test" } } }
    defineMcpServer(options as never)
    expect(urlReads).toBe(1)
  })

  it("makes a new identity per call, even for equal input", () => {
    const options = stdio({})
    expect(defineMcpServer(options)).not.toBe(defineMcpServer(options))
  })
})

describe("errors (MCP-1)", () => {
  const cases: [string, unknown, string][] = [
    ["undefined", undefined, "MCP server definition must be an object"],
    ["null", null, "MCP server definition must be an object"],
    ["string", "docs", "MCP server definition must be an object"],
    ["function", () => {}, "MCP server definition must be an object"],
    ["throwing name", throwing("name"), "MCP server definition must be readable"],
    ["throwing transport", throwing("transport", { name: "n" }), "MCP server definition must be readable"],
    ["empty name", { name: "", transport: { command: "c", type: "stdio" } }, "MCP server name must be a non-empty normalized string"],
    ["padded name", { name: " n", transport: { command: "c", type: "stdio" } }, "MCP server name must be a non-empty normalized string"],
    ["number name", { name: 1, transport: { command: "c", type: "stdio" } }, "MCP server name must be a non-empty normalized string"],
    ["no transport", { name: "n" }, "MCP server transport must be an object"],
    ["null transport", { name: "n", transport: null }, "MCP server transport must be an object"],
    ["string transport", { name: "n", transport: "stdio" }, "MCP server transport must be an object"],
    ["throwing type", { name: "n", transport: throwing("type") }, "MCP server transport must be readable"],
    ["sse type", { name: "n", transport: { type: "sse", url: "https://x.test" } }, 'MCP server transport type must be "stdio" or "streamable-http"'],
    ["missing type", { name: "n", transport: { command: "c" } }, 'MCP server transport type must be "stdio" or "streamable-http"'],
    ["throwing command", { name: "n", transport: throwing("command", { type: "stdio" }) }, "MCP stdio transport must be readable"],
    ["throwing env field", { name: "n", transport: throwing("env", { command: "c", type: "stdio" }) }, "MCP stdio transport must be readable"],
    ["missing command", stdio({ command: undefined }), "MCP stdio command must be a non-empty normalized string"],
    ["padded command", stdio({ command: "srv " }), "MCP stdio command must be a non-empty normalized string"],
    ["empty cwd", stdio({ cwd: "" }), "MCP stdio cwd must be a non-empty normalized string"],
    ["number cwd", stdio({ cwd: 1 }), "MCP stdio cwd must be a non-empty normalized string"],
    ["string args", stdio({ args: "--x" }), "MCP stdio args must be an array of strings"],
    ["number in args", stdio({ args: ["a", 1] }), "MCP stdio args must be an array of strings"],
    ["array-like args", stdio({ args: { 0: "a", length: 1 } }), "MCP stdio args must be an array of strings"],
    ["string env", stdio({ env: "A=b" }), "MCP stdio env must be an object of strings"],
    ["null env", stdio({ env: null }), "MCP stdio env must be an object of strings"],
    ["array env", stdio({ env: ["A=b"] }), "MCP stdio env must be an object of strings"],
    ["number in env", stdio({ env: { A: 1 } }), "MCP stdio env must be an object of strings"],
    ["throwing env value", stdio({ env: throwing("SECRET") }), "MCP stdio env must be readable"],
    ["throwing url", { name: "n", transport: throwing("url", { type: "streamable-http" }) }, "MCP Streamable HTTP transport must be readable"],
    ["throwing headers field", { name: "n", transport: throwing("headers", { type: "streamable-http", url: "https://x.test" }) }, "MCP Streamable HTTP transport must be readable"],
    ["missing url", http({ url: undefined }), "MCP Streamable HTTP url must be a string or URL"],
    ["url-like object", http({ url: { href: "https://x.test" } }), "MCP Streamable HTTP url must be a string or URL"],
    ["fake URL", http({ url: Object.create(URL.prototype) }), "MCP Streamable HTTP url must be a string or URL"],
    ["relative url", http({ url: "/mcp" }), "MCP Streamable HTTP url must be an absolute URL"],
    ["garbage url", http({ url: "not a url" }), "MCP Streamable HTTP url must be an absolute URL"],
    ["ftp url", http({ url: "ftp://x.test/mcp" }), "MCP Streamable HTTP url must use http or https"],
    ["ws url", http({ url: "ws://x.test/mcp" }), "MCP Streamable HTTP url must use http or https"],
    ["file URL", http({ url: new URL("file:///tmp/mcp") }), "MCP Streamable HTTP url must use http or https"],
    ["string headers", http({ headers: "Authorization: x" }), "MCP Streamable HTTP headers must be an object of strings"],
    ["number in headers", http({ headers: { "X-Retry": 3 } }), "MCP Streamable HTTP headers must be an object of strings"],
    ["throwing header", http({ headers: throwing("Authorization") }), "MCP Streamable HTTP headers must be readable"],
  ]
  for (const [label, options, message] of cases) {
    it(`${label}: ${message}`, () => {
      expect(definitionError(options).message).toBe(message)
    })
  }

  it("reports hostile proxies as unreadable, keeping the cause", () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    expect(definitionError(proxy).message).toBe("MCP server definition must be readable")
    const trap = new Proxy({}, { get() { throw new RangeError("trap") } })
    const error = definitionError({ name: "n", transport: trap })
    expect(error.message).toBe("MCP server transport must be readable")
    expect(error.cause).toBeInstanceOf(RangeError)
    const args = new Proxy(["a"], { get(target, key) { if (key === "0") throw new Error("element"); return Reflect.get(target, key) } })
    expect(definitionError(stdio({ args })).message).toBe("MCP stdio transport must be readable")
    const keys = new Proxy({}, { ownKeys() { throw new Error("keys") } })
    expect(definitionError(stdio({ env: keys })).message).toBe("MCP stdio env must be readable")
    expect(definitionError(http({ headers: keys })).message).toBe("MCP Streamable HTTP headers must be readable")
  })

  it("validates the name before the transport, and the command before the other stdio fields", () => {
    expect(definitionError({ name: "", transport: null }).message).toBe("MCP server name must be a non-empty normalized string")
    expect(definitionError(stdio({ args: 1, command: "", env: 1 })).message).toBe("MCP stdio command must be a non-empty normalized string")
  })
})

describe("realm registry (RT-4)", () => {
  it("is a non-enumerable, non-configurable WeakMap on globalThis", () => {
    defineMcpServer(stdio({}))
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, REGISTRY)!
    expect(descriptor.value).toBeInstanceOf(WeakMap)
    expect(descriptor.enumerable).toBe(false)
    expect(descriptor.configurable).toBe(false)
  })

  it("rejects a wrong-typed existing global value", () => {
    const module = fileURLToPath(new URL("../lib/tools/mcp-server.js", import.meta.url))
    const script = `globalThis[Symbol.for("@aml-jsx/sdk/mcp-server-registry")] = {}
try { await import(${JSON.stringify(module)}); console.log("loaded") }
catch (error) { console.log(error.constructor.name + ": " + error.message) }`
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    expect(out.trim()).toBe("TypeError: AML MCP server registry has an invalid global value")
  })
})
