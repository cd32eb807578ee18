// What a Sandbox process's own facts say about an ACP Agent that never got going or could not
// be observed: a session that cannot be set up reads spawn, start, kill, exit (the exit's fact
// follows the kill facts, even when the exit itself is what broke start-up), and a wait()
// that rejects during a turn is that rejection itself as the Agent wrapper's cause — a
// `wait_failed` fact, no exit claimed.
import { describe, expect, it } from "vitest"

import { Agent, AmlRuntime, EvaluationError, Sandbox, defineAcpAgentProvider } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

const closedStream = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })

const provider = defineAcpAgentProvider({
  createLaunch: () => ({ command: "facts-agent", permissionPolicy: "reject_once" }),
  name: "facts-agent",
  workingDirectory: undefined,
})

function sandboxSpawning(spawn: () => any) {
  return new DeterministicSandboxProvider({
    exec: (command) => ({ exitCode: 0, stderr: "", stdout: command === "pwd" ? "/guest\n" : "" }),
    spawn,
  })
}

async function failedRun(sandboxProvider: DeterministicSandboxProvider) {
  const events: any[] = []
  const error = await new AmlRuntime({ agentProvider: provider, trace: (event) => events.push(event) })
    .evaluate(
      <Sandbox access="read-write" provider={sandboxProvider}>
        <Agent>Prompt</Agent>
      </Sandbox>,
    )
    .then(
      () => undefined,
      (cause: any) => cause,
    )
  const facts = events.filter((event) => event.type === "event" && event.name === "sandbox.process").map((event) => event.attributes)
  return { error, facts }
}

/**
 * A guest process whose agent answers `initialize` and `session/new` over newline-delimited
 * JSON-RPC, and whose `wait()` rejects with `waitError` once a prompt arrives.
 */
function processWithFailingWait(waitError: Error) {
  const encoder = new TextEncoder()
  let toClient!: ReadableStreamDefaultController<Uint8Array>
  const stdout = new ReadableStream<Uint8Array>({ start: (controller) => void (toClient = controller) })
  let rejectWait!: (error: Error) => void
  const waiting = new Promise<never>((_resolve, reject) => (rejectWait = reject))
  waiting.catch(() => {})
  let buffered = ""
  const decoder = new TextDecoder()
  const stdin = new WritableStream<Uint8Array>({
    write(chunk) {
      buffered += decoder.decode(chunk, { stream: true })
      let newline
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffered.slice(0, newline))
        buffered = buffered.slice(newline + 1)
        const reply = (result: unknown) => toClient.enqueue(encoder.encode(`${JSON.stringify({ id: message.id, jsonrpc: "2.0", result })}\n`))
        if (message.method === "initialize") reply({ protocolVersion: message.params.protocolVersion })
        else if (message.method === "session/new") reply({ sessionId: "facts-session" })
        else if (message.method === "session/prompt") rejectWait(waitError)
      }
    },
  })
  let killed = 0
  const process = Object.freeze({
    id: "guest-process",
    async kill() {
      killed++
      try {
        toClient.close()
      } catch {
        // Already closed.
      }
    },
    stderr: closedStream(),
    stdin,
    stdout,
    wait: () => waiting,
  })
  return { kills: () => killed, process }
}

describe("Sandbox process facts of an ACP Agent", () => {
  it("a session that cannot be set up reports the exit after the kill facts", async () => {
    const exited = Object.freeze({
      id: "gone-process",
      async kill() {},
      stderr: closedStream(),
      stdin: new WritableStream(),
      stdout: closedStream(),
      async wait() {
        return { exitCode: 0 }
      },
    })
    const { error, facts } = await failedRun(sandboxSpawning(() => exited))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toMatch(/^Agent "facts-agent" \(span-\d+\) failed$/)
    expect(error.cause.message).toBe("ACP Agent process exited with code 0 before its ACP session was ready")
    expect(facts.map((fact) => fact.state)).toEqual(["spawn_requested", "started", "kill_requested", "kill_completed", "exited"])
    expect(facts[4]).toEqual({ "execution.id": "gone-process", exitCode: 0, state: "exited" })
  })

  it("a wait() that rejects during a turn is the wrapper's cause, and no exit is claimed", async () => {
    const waitError = new Error("guest supervisor lost the process")
    const guest = processWithFailingWait(waitError)
    const { error, facts } = await failedRun(sandboxSpawning(() => guest.process))
    expect(error).toBeInstanceOf(EvaluationError)
    expect(error.message).toMatch(/^Agent "facts-agent" \(span-\d+\) failed$/)
    expect(error.cause).toBe(waitError)
    expect(facts).toEqual([
      { state: "spawn_requested" },
      { "execution.id": "guest-process", state: "started" },
      { "execution.id": "guest-process", state: "wait_failed" },
      { "execution.id": "guest-process", state: "kill_requested" },
      { "execution.id": "guest-process", state: "kill_completed" },
    ])
    expect(guest.kills()).toBe(1)
  })
})
