// A provider module for examples/review.tsx: the reviewers and the synthesis run on OpenCode
// (the built-in `opencodeAgent` ACP profile) instead of the deterministic rules.
//
//   npm install --global opencode-ai        # or have `opencode` on the PATH another way
//   AML_REVIEW_PROVIDER_MODULE=examples/review-opencode.ts \
//   AML_OPENCODE_MODEL=anthropic/claude-sonnet-4-5 npx aml run examples/review.tsx
//
// AML_OPENCODE_MODEL picks the model (OpenCode's `provider/model` form; its credentials come
// from the provider's usual variables, such as ANTHROPIC_API_KEY). AML_OPENCODE_CONFIG may
// hold an OpenCode config as JSON, for instance a provider for an OpenAI-compatible endpoint.
import { opencodeAgent } from "@aml-jsx/sdk"

const config = process.env.AML_OPENCODE_CONFIG
const model = process.env.AML_OPENCODE_MODEL

export default opencodeAgent({
  ...(config === undefined || config === "" ? {} : { config: JSON.parse(config) }),
  ...(model === undefined || model === "" ? {} : { model }),
})
