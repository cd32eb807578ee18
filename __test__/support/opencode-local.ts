// OpenCode pointed at the scripted model server (support/model-server.ts) on 127.0.0.1: its
// config and the environment that keeps it offline, shared by every real-agent spec.

/** The OpenCode config with the scripted server at `url` as an OpenAI-compatible provider. */
export function localOpencodeConfig(url: string) {
  return {
    autoupdate: false,
    model: "local/scripted",
    provider: {
      local: {
        models: { scripted: { name: "Scripted", tool_call: true } },
        name: "Local scripted",
        npm: "@ai-sdk/openai-compatible",
        options: { apiKey: "dummy", baseURL: url },
      },
    },
    share: "disabled",
    small_model: "local/scripted",
  }
}

/** No update check and no model catalogue download: nothing leaves the machine. */
export const OPENCODE_OFFLINE_ENV = { OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1" } as const
