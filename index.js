// Public entry of @aml-jsx/sdk. See docs/ARCHITECTURE.md for how the pieces fit.
export { AbstractAgentProvider } from "./lib/abstract-agent-provider.js"
export { executeAgentProviderSession } from "./lib/agent-provider-session.js"
export { createAgentProviderTurns } from "./lib/agent-provider-turns.js"
export { evaluate } from "./lib/component-scope.js"
export { createContext, useContext } from "./lib/context.js"
export { createConsoleTracer } from "./lib/console-tracer.js"
export { defineAgentProvider } from "./lib/define-agent-provider.js"
export { EvaluationError, ToolInputError, ToolOutputError, WorkspaceConflictError } from "./lib/errors.js"
export { Fragment } from "./lib/fragment.js"
export { localSandbox } from "./lib/local-sandbox.js"
export { spawnLocalProcess } from "./lib/local-process.js"
export { defineMcpServer } from "./lib/mcp-server.js"
export {
  Agent,
  File,
  FollowUp,
  Include,
  Loop,
  Mcp,
  Parallel,
  Sandbox,
  Script,
  Skill,
  System,
  Tool,
  Workspace,
} from "./lib/primitives.js"
export { createOpenTelemetryTracer } from "./lib/otel-tracer.js"
export { ProcessSignalCancellation } from "./lib/process-signal-cancellation.js"
export { AmlRuntime } from "./lib/runtime.js"
export { AbstractSandboxProvider, SandboxCommand, defineSandboxProvider } from "./lib/sandbox-provider.js"
export { supportsSandboxRuntime } from "./lib/sandbox-runtime.js"
export { defineTool } from "./lib/tool.js"
export { defineWorkspaceProvider } from "./lib/workspace-provider.js"
