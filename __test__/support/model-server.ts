// A scripted model server on 127.0.0.1 for the real coding-agent tests: OpenAI Chat
// Completions and Responses API, both streamed as SSE. It plays one fixed script from what
// each request carries: call the AML Tool (a tool whose name ends with `toolSuffix`) once,
// then, when offered, the AML submission tool with the Tool's result, then answer with text.
// A request whose prompt contains STALL is never answered (for cancellation tests).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export const STALL = "AML-STALL"

export interface ModelRequest {
  path: string
  body: any
}

interface Step {
  text?: string
  call?: { name: string; args: unknown }
}

const text = (value: unknown): string =>
  typeof value === "string"
    ? value
    : Array.isArray(value)
      ? value.map((part: any) => part?.text ?? part?.output ?? "").join("")
      : value === undefined || value === null
        ? ""
        : JSON.stringify(value)

/** Tool names, tool results and the full prompt text of either wire format. */
function read(path: string, body: any) {
  if (path.endsWith("/responses")) {
    const items: any[] = Array.isArray(body.input) ? body.input : []
    // Codex groups an MCP server's tools in a `namespace` tool: "<namespace>/<tool>".
    const tools = (body.tools ?? [])
      .flatMap((tool: any) =>
        tool.type === "namespace" ? (tool.tools ?? []).map((inner: any) => `${tool.name}/${inner.name}`) : [tool.name ?? tool.function?.name],
      )
      .filter(Boolean)
    const results = items.filter((item) => item.type === "function_call_output").map((item) => text(item.output))
    const prompt = [body.instructions ?? "", ...items.map((item) => text(item.content))].join("\n")
    return { prompt, results, tools }
  }
  const messages: any[] = body.messages ?? []
  const tools = (body.tools ?? []).map((tool: any) => tool.function?.name).filter(Boolean)
  const results = messages.filter((message) => message.role === "tool").map((message) => text(message.content))
  const prompt = messages.map((message) => text(message.content)).join("\n")
  return { prompt, results, tools }
}

function plan(path: string, body: any, toolSuffix: string): Step | "stall" {
  const { prompt, results, tools } = read(path, body)
  if (prompt.includes(STALL) && results.length === 0) return "stall"
  // pi-mcp-adapter offers one proxy tool, `mcp`, that takes { tool, args } (and knows the
  // exact names from its cache); other agents list each MCP tool under a prefixed name.
  const proxy = tools.includes("mcp") && prompt.includes("aml_submit_result")
  const tool = proxy ? "mcp" : tools.find((name: string) => name.endsWith(toolSuffix))
  const submit = proxy ? "mcp" : tools.find((name: string) => name.endsWith("aml_submit_result"))
  const input = (name: string, args: unknown) => (proxy ? { args, tool: name } : args)
  if (tool !== undefined && results.length === 0) return { call: { args: input(toolSuffix, { text: "offline" }), name: tool } }
  // Agents wrap tool output differently (plain text, JSON content blocks, timing lines).
  const echoed = results.map((result: string) => /echo: [A-Za-z0-9]+/.exec(result)?.[0]).find(Boolean) ?? ""
  if (submit !== undefined && results.length === 1) {
    return { call: { args: input("aml_submit_result", { result: { echoed } }), name: submit } }
  }
  if (tool === undefined && submit === undefined) return { text: "Scripted title" }
  return { text: `final: ${echoed.trim()}` }
}

function sse(res: ServerResponse, events: unknown[]) {
  res.writeHead(200, { "cache-control": "no-cache", "content-type": "text/event-stream" })
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`)
}

function chat(res: ServerResponse, step: Step) {
  const base = { created: 1, id: "chatcmpl-scripted", model: "scripted", object: "chat.completion.chunk" }
  const usage = { completion_tokens: 2, prompt_tokens: 10, total_tokens: 12 }
  const delta =
    step.call === undefined
      ? { content: step.text, role: "assistant" }
      : {
          role: "assistant",
          tool_calls: [{ function: { arguments: JSON.stringify(step.call.args), name: step.call.name }, id: "call_1", index: 0, type: "function" }],
        }
  sse(res, [
    { ...base, choices: [{ delta, finish_reason: null, index: 0 }] },
    { ...base, choices: [{ delta: {}, finish_reason: step.call === undefined ? "stop" : "tool_calls", index: 0 }], usage },
  ])
  res.end("data: [DONE]\n\n")
}

function callName(name: string) {
  const slash = name.indexOf("/")
  return slash < 0 ? { name } : { name: name.slice(slash + 1), namespace: name.slice(0, slash) }
}

function responses(res: ServerResponse, step: Step) {
  const id = "resp_scripted"
  const item =
    step.call === undefined
      ? { content: [{ annotations: [], text: step.text, type: "output_text" }], id: "msg_1", role: "assistant", status: "completed", type: "message" }
      : { arguments: JSON.stringify(step.call.args), call_id: "call_1", id: "fc_1", ...callName(step.call.name), status: "completed", type: "function_call" }
  const response = { created_at: 1, id, model: "scripted", object: "response", output: [] as unknown[], status: "in_progress" }
  const events: unknown[] = [{ response, sequence_number: 0, type: "response.created" }]
  events.push({ item, output_index: 0, sequence_number: 1, type: "response.output_item.added" })
  if (step.call === undefined) {
    events.push({ content_index: 0, delta: step.text, item_id: "msg_1", output_index: 0, sequence_number: 2, type: "response.output_text.delta" })
  }
  events.push({ item, output_index: 0, sequence_number: 3, type: "response.output_item.done" })
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 }
  events.push({ response: { ...response, output: [item], status: "completed", usage }, sequence_number: 4, type: "response.completed" })
  sse(res, events)
  res.end()
}

async function body(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks).toString("utf8")
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

export interface ModelServer {
  url: string
  requests: ModelRequest[]
  stalled: () => number
  close(): Promise<void>
}

/** Starts the scripted server on 127.0.0.1 (a random port). */
export async function startModelServer(toolSuffix: string): Promise<ModelServer> {
  const requests: ModelRequest[] = []
  const open = new Set<ServerResponse>()
  let stalled = 0
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0]!
    const parsed = req.method === "POST" ? await body(req) : undefined
    requests.push({ body: parsed, path })
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ data: [{ created: 1, id: "scripted", object: "model", owned_by: "aml" }], object: "list" }))
      return
    }
    if (req.method !== "POST" || !(path.endsWith("/chat/completions") || path.endsWith("/responses"))) {
      res.writeHead(404).end()
      return
    }
    const step = plan(path, parsed, toolSuffix)
    if (step === "stall") {
      stalled++
      open.add(res)
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.on("close", () => open.delete(res))
      return
    }
    if (path.endsWith("/responses")) responses(res, step)
    else chat(res, step)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    requests,
    stalled: () => stalled,
    url: `http://127.0.0.1:${port}/v1`,
  }
}
