// A timing hop between Restate workers and the ingress for `npm run bench -- durable`: it
// forwards every request and notes, for each journal request, its handler, its time from
// arrival to Restate's answer, and the bytes each way. Plain HTTP, so it times any journal
// protocol (the bench can run against an older checkout for before/after figures).
import { createServer } from "node:http"

export async function startIngressHop(target) {
  const requests = []
  const forward = async (req, res) => {
    const arrived = performance.now()
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const body = Buffer.concat(chunks)
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !["host", "content-length", "connection"].includes(name)))
    const answer = await fetch(`${target}${req.url}`, { body: body.length > 0 ? body : undefined, headers, method: req.method })
    const text = Buffer.from(await answer.arrayBuffer())
    const handler = /\/([a-z]+)$/.exec(req.url ?? "")?.[1]
    requests.push({ arrived, handler, ms: performance.now() - arrived, sent: body.length, received: text.length, status: answer.status })
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
    res.end(text)
  }
  const server = createServer((req, res) => forward(req, res).catch(() => res.destroy()))
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** The requests noted so far, and forgets them. */
    take: () => requests.splice(0),
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
