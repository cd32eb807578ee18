// Public entry of @aml-jsx/sdk. See docs/ARCHITECTURE.md for how the pieces fit.
export { AbstractAgentProvider } from "./lib/abstract-agent-provider.js"
export { defineAcpAgentProvider } from "./lib/acp-agent-provider.js"
export { codexAgent } from "./lib/agents/codex-agent.js"
export { copilotAgent } from "./lib/agents/copilot-agent.js"
export { glmAgent } from "./lib/agents/glm-agent.js"
export { opencodeAgent } from "./lib/agents/opencode-agent.js"
export { piAgent } from "./lib/agents/pi-agent.js"
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
// Workspace persistence and stores (crates/aml-workspace; docs/WORKSPACE-PERSISTENCE.md).
export { FilesystemWorkspaceStorage } from "./lib/filesystem-workspace-storage.js"
export { filesystemWorkspace } from "./lib/filesystem-workspace.js"
export { localWorkspace } from "./lib/local-workspace.js"
export { createPersistentWorkspaceProvider, WorkspacePersistence } from "./lib/workspace-persistence.js"
export { workspaceStorageSegment } from "./lib/workspace-segment.js"
export { s3Workspace } from "./lib/s3-workspace.js"
export { ProcessSignalCancellation } from "./lib/process-signal-cancellation.js"
export { AmlRuntime } from "./lib/runtime.js"
export { AbstractSandboxProvider, SandboxCommand, defineSandboxProvider } from "./lib/sandbox-provider.js"
export { supportsSandboxRuntime } from "./lib/sandbox-runtime.js"
export { defineTool } from "./lib/tool.js"
export { defineWorkspaceProvider } from "./lib/workspace-provider.js"
// Resumable evaluations and the failure channel (docs/JOURNAL.md).
export { describeFailure } from "./lib/describe-failure.js"
export { createFileJournal } from "./lib/journal-file.js"
export { createMemoryJournal } from "./lib/journal-memory.js"
// Container and remote Sandboxes (docs/DOCKER-SANDBOX.md; crates/aml-docker).
export { dockerSandbox } from "./lib/docker-sandbox.js"
export { daytonaSandbox } from "./lib/daytona-sandbox.js"
export { modalSandbox } from "./lib/modal-sandbox.js"
