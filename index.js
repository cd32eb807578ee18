// Public entry of @aml-jsx/sdk. See docs/ARCHITECTURE.md for how the pieces fit.
export { AbstractAgentProvider } from "./lib/agents/abstract-agent-provider.js"
export { defineAcpAgentProvider } from "./lib/agents/acp/provider.js"
export { codexAgent } from "./lib/agents/profiles/codex.js"
export { copilotAgent } from "./lib/agents/profiles/copilot.js"
export { glmAgent } from "./lib/agents/profiles/glm.js"
export { opencodeAgent } from "./lib/agents/profiles/opencode.js"
export { piAgent } from "./lib/agents/profiles/pi.js"
export { executeAgentProviderSession } from "./lib/agents/provider-session.js"
export { createAgentProviderTurns } from "./lib/agents/provider-turns.js"
export { evaluate } from "./lib/core/component-scope.js"
export { createContext, useContext } from "./lib/core/context.js"
export { createConsoleTracer } from "./lib/observability/console-tracer.js"
export { defineAgentProvider } from "./lib/agents/define-agent-provider.js"
export { EvaluationError, ToolInputError, ToolOutputError, WorkspaceConflictError } from "./lib/errors/errors.js"
export { Fragment } from "./lib/core/fragment.js"
export { localSandbox } from "./lib/sandbox/local/local-sandbox.js"
export { spawnLocalProcess } from "./lib/process/local-process.js"
export { defineMcpServer } from "./lib/tools/mcp-server.js"
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
} from "./lib/core/primitives.js"
export { createOpenTelemetryTracer } from "./lib/observability/otel-tracer.js"
// Workspace persistence and stores (crates/aml-workspace; docs/WORKSPACE-PERSISTENCE.md).
export { FilesystemWorkspaceStorage } from "./lib/workspace/filesystem-storage.js"
export { filesystemWorkspace } from "./lib/workspace/filesystem-workspace.js"
export { localWorkspace } from "./lib/workspace/local-workspace.js"
export { createPersistentWorkspaceProvider, WorkspacePersistence } from "./lib/workspace/persistence.js"
export { workspaceStorageSegment } from "./lib/workspace/segment.js"
export { s3Workspace } from "./lib/workspace/s3/s3-workspace.js"
export { ProcessSignalCancellation } from "./lib/process/signal-cancellation.js"
export { AmlRuntime } from "./lib/core/runtime.js"
export { AbstractSandboxProvider, SandboxCommand, defineSandboxProvider } from "./lib/sandbox/provider.js"
export { supportsSandboxRuntime } from "./lib/sandbox/runtime.js"
export { defineTool } from "./lib/tools/tool.js"
export { defineWorkspaceProvider } from "./lib/workspace/provider.js"
// Resumable evaluations and the failure channel (docs/JOURNAL.md).
export { describeFailure } from "./lib/errors/describe-failure.js"
export { normalizeUsage } from "./lib/core/usage.js"
export { createFileJournal } from "./lib/journal/file.js"
export { recordRuns } from "./lib/studio/recorder.js"
export { createMemoryJournal } from "./lib/journal/memory.js"
// Container and remote Sandboxes (docs/DOCKER-SANDBOX.md; crates/aml-docker).
export { dockerSandbox } from "./lib/sandbox/docker/docker-sandbox.js"
export { daytonaSandbox } from "./lib/sandbox/remote/daytona.js"
export { modalSandbox } from "./lib/sandbox/remote/modal.js"
