// A scripted "model" on 127.0.0.1 for running examples/review.tsx on a real coding agent
// offline: OpenAI Chat Completions, streamed as SSE, which OpenCode's openai-compatible
// provider speaks. It plays a reviewer the way a model would, only through what each
// request carries:
// - a reviewer turn (an offered tool ending in `list_files`): call list_files, then
//   read_file once per listed file, then answer with "- file:line problem" findings for the
//   focus named in the prompt, judged from the file text the Tools returned;
// - the synthesis turn (the prompt asks to merge findings): repeat the finding lines it was
//   given and end with a verdict line;
// - anything else without tools (the agent's own title requests): a short title.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

type Step = { text: string } | { call: { name: string; args: unknown } }

export interface ReviewModelServer {
  url: string
  /** Every request body received, in order. */
  requests: any[]
  close(): Promise<void>
}

// What the scripted reviewer notices, per focus.
const CHECKS: Record<string, { pattern: RegExp; problem: string }[]> = {
  correctness: [{ pattern: /return a \/ b/, problem: "divides without checking for a zero divisor" }],
  formatting: [{ pattern: /cents \/ 100/, problem: "prints $1.5 instead of $1.50 (no fixed two decimals)" }],
}

function content(value: unknown): string {
  if (typeof value === "string") return value
  if (Array.isArray(value)) return value.map((part: any) => (typeof part === "string" ? part : (part?.text ?? ""))).join("")
  return value === undefined || value === null ? "" : JSON.stringify(value)
}

/** A Tool result as the text the Tool returned (MCP text content may be JSON-encoded). */
function toolText(message: any): string {
  const raw = content(message.content)
  try {
    const parsed = JSON.parse(raw)
    return typeof parsed === "string" ? parsed : raw
  } catch {
    return raw
  }
}

function plan(body: any): Step {
  const messages: any[] = body.messages ?? []
  const tools: string[] = (body.tools ?? []).map((tool: any) => tool.function?.name).filter(Boolean)
  const prompt = messages.map((message) => content(message.content)).join("\n")
  const results = messages.filter((message) => message.role === "tool").map(toolText)
  const list = tools.find((name) => name.endsWith("list_files"))
  const read = tools.find((name) => name.endsWith("read_file"))
  if (list !== undefined && read !== undefined) {
    if (results.length === 0) return { call: { args: {}, name: list } }
    const files: string[] = JSON.parse(/\[[^\]]*\]/.exec(results[0]!)?.[0] ?? "[]")
    const read_ = results.length - 1
    if (read_ < files.length) return { call: { args: { path: files[read_] }, name: read } }
    const focus = /Focus: (\w+)/.exec(prompt)?.[1] ?? "general"
    const findings: string[] = []
    files.forEach((file, index) => {
      results[index + 1]!.split("\n").forEach((line, number) => {
        for (const check of CHECKS[focus] ?? []) if (check.pattern.test(line)) findings.push(`- ${file}:${number + 1} ${check.problem}`)
      })
    })
    return { text: `${focus} review:\n${findings.length === 0 ? "- no findings" : findings.join("\n")}\n` }
  }
  if (tools.length > 0 && prompt.includes("Merge the specialists' findings")) {
    const findings = prompt.split("\n").filter((line) => /^- \S+:\d+ /.test(line))
    const verdict = findings.length === 0 ? "approve" : `request changes (${findings.length} findings)`
    return { text: `Summary of the specialist reviews:\n${findings.join("\n")}\n\nVerdict: ${verdict}` }
  }
  return { text: "Code review" }
}

function stream(res: ServerResponse, step: Step) {
  const base = { created: 1, id: "chatcmpl-review", model: "scripted", object: "chat.completion.chunk" }
  const delta =
    "text" in step
      ? { content: step.text, role: "assistant" }
      : { role: "assistant", tool_calls: [{ function: { arguments: JSON.stringify(step.call.args), name: step.call.name }, id: "call_1", index: 0, type: "function" }] }
  const finish = "text" in step ? "stop" : "tool_calls"
  res.writeHead(200, { "cache-control": "no-cache", "content-type": "text/event-stream" })
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ delta, finish_reason: null, index: 0 }] })}\n\n`)
  const usage = { completion_tokens: 5, prompt_tokens: 20, total_tokens: 25 }
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ delta: {}, finish_reason: finish, index: 0 }], usage })}\n\n`)
  res.end("data: [DONE]\n\n")
}

async function readBody(req: IncomingMessage) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
}

/** Starts the server on 127.0.0.1 (a random port); `url` is the OpenAI-style base URL. */
export async function startReviewModelServer(): Promise<ReviewModelServer> {
  const requests: any[] = []
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0]!
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ data: [{ created: 1, id: "scripted", object: "model", owned_by: "aml" }], object: "list" }))
      return
    }
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      res.writeHead(404).end()
      return
    }
    const body = await readBody(req)
    requests.push(body)
    stream(res, plan(body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    requests,
    url: `http://127.0.0.1:${port}/v1`,
  }
}
