// glmAgent (INVENTORY BA-3): the community `glm-acp-agent` adapter with a private session
// directory; system text as a first-turn `<SYSTEM>` prelude.

import { join } from "node:path"

import { createAcpAgentProvider } from "../acp/provider.js"
import { envRecord, optionalString, readOnly, readOptions, stringArgs, systemPrelude } from "./options.js"

const INSTALL = "Install it with `npm install --global glm-acp-agent`, or set the GLM command option"

/** The GLM ACP Agent provider (`name: "glm"`). */
export function glmAgent(options) {
  const o = readOptions(options, "GLM")
  const command = optionalString(o.command, "GLM command") ?? "glm-acp-agent"
  const apiKey = optionalString(o.apiKey, "GLM apiKey")
  const baseUrl = optionalString(o.baseUrl, "GLM baseUrl")
  const model = optionalString(o.model, "GLM model")
  const workingDirectory = optionalString(o.workingDirectory, "GLM workingDirectory")
  const args = stringArgs(o.args, "GLM")
  const env = envRecord(o.env, "GLM")
  const maxTokens = o.maxTokens
  if (maxTokens !== undefined && !(Number.isSafeInteger(maxTokens) && maxTokens > 0)) {
    throw new TypeError("GLM maxTokens must be a positive safe integer")
  }
  const profile = {
    createLaunch({ request, stateDirectory }) {
      const launchEnv = { ...env }
      if (apiKey !== undefined) launchEnv.Z_AI_API_KEY = apiKey
      if (baseUrl !== undefined) launchEnv.ACP_GLM_BASE_URL = baseUrl
      if (maxTokens !== undefined) launchEnv.ACP_GLM_MAX_TOKENS = String(maxTokens)
      const chosen = request.model ?? model
      if (chosen !== undefined) launchEnv.ACP_GLM_MODEL = chosen
      launchEnv.ACP_GLM_SESSION_DIR = join(stateDirectory, "sessions")
      return {
        args,
        authenticationMethodId: apiKey === undefined ? undefined : "z-ai-api-key",
        command,
        env: launchEnv,
        initialPromptPrefix: systemPrelude(request.system),
        permissionPolicy: readOnly(request) ? "allow_once" : "allow_always",
      }
    },
    name: "glm",
    workingDirectory,
  }
  return createAcpAgentProvider(profile, INSTALL)
}
