// `aml run --agent <profile>[:<model>]` (docs/CLI.md): a built-in coding-agent profile for
// the Agents that name no provider, so a plain `<Agent>` workflow runs without a main().

/** The profiles `--agent` accepts, by name, as the SDK exports them. */
const PROFILES = {
  codex: "codexAgent",
  copilot: "copilotAgent",
  glm: "glmAgent",
  opencode: "opencodeAgent",
  pi: "piAgent",
}

/** `{ profile, model? }` for `value`, or the CliUsageError-worthy message. */
export function parseAgentChoice(value) {
  const colon = value.indexOf(":")
  const profile = colon === -1 ? value : value.slice(0, colon)
  const model = colon === -1 ? undefined : value.slice(colon + 1)
  if (!Object.hasOwn(PROFILES, profile)) {
    return { problem: `unknown agent profile \`${profile}\` for \`--agent\` (one of ${Object.keys(PROFILES).join(", ")})` }
  }
  if (model !== undefined && model.trim() === "") return { problem: "option `--agent <profile>[:<model>]` has an empty model" }
  return { profile, model }
}

/** The provider `choice` names, built from the SDK the workflow runs against. */
export function agentProviderFor(sdk, choice) {
  return sdk[PROFILES[choice.profile]](choice.model === undefined ? undefined : { model: choice.model })
}
