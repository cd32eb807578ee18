// Helpers for the ACP provider specs: profiles over the scripted agent built on the official
// @agentclientprotocol/sdk (__test__/fixtures/acp-scripted-agent.mjs).
import { fileURLToPath } from "node:url"

import { defineAcpAgentProvider, type AcpAgentLaunch, type AcpAgentLaunchContext } from "@aml-jsx/sdk"

export const SCRIPTED_AGENT = fileURLToPath(new URL("../fixtures/acp-scripted-agent.mjs", import.meta.url))

export type LaunchOverrides = Partial<AcpAgentLaunch> | ((ctx: AcpAgentLaunchContext) => Partial<AcpAgentLaunch>)

/** A provider whose launch runs the scripted agent with `node`. */
export function scriptedAcp(overrides: LaunchOverrides = {}, profile: { name?: string; workingDirectory?: string } = {}) {
  const contexts: AcpAgentLaunchContext[] = []
  const provider = defineAcpAgentProvider({
    createLaunch(ctx) {
      contexts.push(ctx)
      const extra = typeof overrides === "function" ? overrides(ctx) : overrides
      return { args: [SCRIPTED_AGENT], command: process.execPath, permissionPolicy: "reject_once", ...extra }
    },
    name: profile.name ?? "scripted-acp",
    workingDirectory: profile.workingDirectory,
  })
  return { contexts, provider }
}

/** `start:name` / `end:name:status` / `event:name` for agent spans and point events. */
export const outline = (events: any[]) =>
  events
    .filter((e) => e.kind === "agent" || e.type === "event")
    .map((e) =>
      e.type === "span.start" ? `start:${e.name}` : e.type === "span.end" ? `end:${e.name}:${e.status}` : `event:${e.name}`,
    )

/**
 * The trace without an agent's own exit during cleanup. Cleanup closes the agent's stdin
 * before it kills the tree, so an agent that ends on end of input (the scripted one does) may
 * exit before the kill lands: its exit code is then reported after `kill_completed` as a
 * `sandbox.process` `exited` event (as the reference SDK reports it), and otherwise nothing
 * follows. Both are correct, and which one happens is a race a loaded machine decides; this
 * drops only that one event (exit code 0, right after `kill_completed`), so a test can assert
 * everything else exactly.
 */
export function withoutSelfExit<T extends { name?: string; type?: string; attributes?: Record<string, unknown> }>(events: T[]): T[] {
  let last: string | undefined
  return events.filter((event) => {
    if (event.type !== "event" || event.name !== "sandbox.process") return true
    const state = event.attributes?.state as string | undefined
    const selfExit = state === "exited" && event.attributes?.exitCode === 0 && last === "kill_completed"
    last = state
    return !selfExit
  })
}
