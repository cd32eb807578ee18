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
