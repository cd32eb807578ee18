// The only module that touches the generated napi loader. Everything else imports from here,
// so the boundary is one line to find.
//
// The binding exposes free functions over a domain handle (a class method call costs about
// three times a free function call, and the driver makes one or two per value).
// NativeEvaluation binds the handle once; V8 inlines these one-line forwarders.
import { isMainThread } from "node:worker_threads"

import { loadNativeBinding } from "./native-binding-error.js"

// Imported dynamically so that napi's "Cannot find native binding" can be caught and replaced
// by an error naming this platform's package (native-binding-error.js); the module namespace
// is the same object a static `import * as binding` would give.
const binding = await loadNativeBinding(() => import("../../native/binding.js"))

// The process supervisor is a child of this process: when Node exits on its own, the child
// dies by its death signal and is reparented to PID 1, which on some machines never reaps it.
// Ending it here (bounded: 2 s) leaves neither it nor any tree it still held. Only the main
// thread: a Worker's exit is not the process's.
if (isMainThread) process.once("exit", () => binding.processSupervisorStop(2000))

export const { jsonSchemaProblem, liveDomains, normalizeUsage, primitiveKinds, sumUsage } = binding

// Process supervision (src/process*.rs): free functions over integer process handles.
// The journal in a Restate Virtual Object (src/journal/restate.rs).
export const {
  restateJournalClose,
  restateJournalEntryProblem,
  restateJournalLoad,
  restateJournalOpen,
  restateJournalProtocol,
  restateJournalRecord,
} = binding

export const {
  liveProcesses,
  processCloseOutput,
  processCloseStdin,
  processExec,
  processKill,
  processRead,
  processRelease,
  processRuntimeStarted,
  processSpawn,
  processWait,
  processWrite,
} = binding

// Rust-native providers (src/tools/dispatch.rs, src/tools/native_scripted.rs, src/evaluation/cancellation.rs):
// the one Tool dispatcher, cancellation tokens by id, the scripted test provider.
export const {
  cancellationCancel,
  cancellationCreate,
  cancellationRelease,
  liveCancellations,
  nativeScriptProblem,
  nativeScriptRun,
  toolDispatcherInstall,
  toolDispatcherInstalled,
} = binding

// Plain file and path work (src/files/skill.rs over crates/aml-files): portable paths and
// <Skill> package snapshots, staging and removal.
export const { includeStage, portablePathResolve, sandboxCommandCwdProblem, skillPackageRead, skillPackageRemove, skillPackageStage, skillSourceRead, sourceFileRead } = binding

// The ACP engine (src/acp/session.rs over crates/aml-acp): sessions by handle, one event stream each.
export const {
  acpLaunchFilesWrite,
  acpLaunchPathProblem,
  acpBridgeStop,
  acpLoopBridgeAnswer,
  acpLoopBridgeDescriptor,
  acpLoopBridgeDrop,
  acpLoopBridgeFeed,
  acpLoopBridgeOpen,
  acpSessionCancel,
  acpSessionClose,
  acpSessionNext,
  acpSessionPrompt,
  acpSessionRelease,
  acpSessionStart,
  acpSessionStartExternal,
  acpExternalEnd,
  acpExternalExited,
  acpExternalFeed,
  acpExternalInput,
  acpExternalKilled,
  acpExternalKillRequested,
  acpRelayClose,
  acpKillGraceMs,
  acpRelayOpen,
  acpRelayReady,
  acpStateDirectoryCreate,
  acpStateDirectoryRemove,
  liveAcpBridges,
  liveAcpRelays,
  liveAcpSessions,
} = binding

// The S3 Workspace store (src/workspace/s3.rs): storages (native client, or an application's
// S3Client behind the port of src/workspace/s3_port.rs), leases and bodies by handle.
export const {
  s3BodyClose,
  s3BodyNext,
  s3LeaseClose,
  s3LeaseDelete,
  s3LeaseList,
  s3LeaseRead,
  s3LeaseRefresh,
  s3LeaseRelease,
  s3LeaseWrite,
  s3LiveHandles,
  s3LockLeaseProblem,
  s3StorageAcquire,
  s3StorageClose,
  s3StorageCreate,
  s3StorageCreateForClient,
} = binding

const {
  agentHandshakeDone,
  agentMcp,
  agentTools,
  closeRoot,
  domainCreate,
  domainDispose,
  drainAgentQueue,
  drainTrace,
  drainTraceBatch,
  enterFollowUp,
  enterSystem,
  enterScope,
  enterSkill,
  enterTransparent,
  errorMessage,
  fail,
  grantMcp,
  grantTool,
  invalid,
  isStructured,
  liveTasks,
  loopPark,
  loopResume,
  loopTransition,
  openRoot,
  point,
  setLoopRender,
  setStructured,
  setTracing,
  takeError,
  unknownElement,
  scopeDone,
  scopeInput,
  skillDone,
  agentSkills,
  withdrawAgent,
  agentUsage,
  evaluationUsage,
} = binding

// The per-value and per-Agent step calls are plain Node-API callbacks (src/hot_path/callbacks.rs):
// a #[napi] function with arguments pays for a borrow scope on every call.
const {
  agentDone,
  agentPlan,
  array,
  closeSpan,
  closeToolSpan,
  currentSpan,
  empty,
  enterAgent,
  enterTextAgent,
  finish,
  finishTextAgent,
  newTask,
  node,
  openSpan,
  openToolSpan,
  releaseAgentSlot,
  scheduleAgent,
  text,
} = binding.hotPath()

// Workspace, <File>, <Include> (src/evaluation/workspace_scope.rs, src/files/confined.rs): confined file operations.
export const { FILE_READ_LIMIT_BYTES, fsReadFile, fsReadFileBeneath, fsWriteFile, fsWriteFileBeneath } = binding
// Host path confinement of the built-in Sandbox providers (src/files/confined.rs over
// crates/aml-files/src/host_path.rs).
export const { hostDirectoryResolve } = binding
// The evaluation journal (src/journal*.rs, docs/JOURNAL.md); the per-Agent replay and the
// index appends are plain Node-API callbacks (src/hot_path/journal.rs).
export const {
  JournalIndexHandle,
  journalToolDigest,
  journalEnable,
  journalFileAppend,
  journalFileCut,
  journalFileOpen,
  journalIndexFileRecorded,
  journalIndexRecorded,
  journalIndexSlot,
  journalIndexSlots,
  journalMarkReplayed,
  journalRecordInto,
  journalStep,
  journalStepTake,
  journalToolKey,
  journalToolStep,
  liveJournalIndexes,
} = binding
export const { journalAgent, journalIndexAdd, journalLocalText, journalRecordFinish, journalRecordText } = binding.journalHotPath()
const { claimWorkspace, primitiveChannel } = binding

export class NativeEvaluation {
  constructor(limits, allowedTools, system, allowedMcpServers = null) {
    this.id = domainCreate(limits, allowedTools, system, allowedMcpServers)
  }

  /** Frees the native domain; every later call fails with "AML evaluation domain is closed". */
  dispose() {
    domainDispose(this.id)
  }

  setTracing(enabled, content) {
    return setTracing(this.id, enabled, content)
  }
  drainTraceBatch(content) {
    return drainTraceBatch(this.id, content)
  }
  drainTrace() {
    return drainTrace(this.id)
  }
  openRoot() {
    return openRoot(this.id)
  }
  closeRoot(errorType, message) {
    return closeRoot(this.id, errorType, message)
  }
  newTask(parent) {
    return newTask(this.id, parent)
  }
  setStructured(task) {
    return setStructured(this.id, task)
  }
  isStructured(task) {
    return isStructured(this.id, task)
  }
  setLoopRender(task, toolReference) {
    return setLoopRender(this.id, task, toolReference)
  }
  loopPark(task) {
    return loopPark(this.id, task)
  }
  loopResume(task) {
    return loopResume(this.id, task)
  }
  /** null, or the maxStateTransitions message (crates/aml-engine/src/loop_render.rs). */
  loopTransition(task, name, iteration) {
    return loopTransition(this.id, task, name, iteration)
  }
  text(task, value) {
    return text(this.id, task, value)
  }
  empty(task) {
    return empty(this.id, task)
  }
  array(task, identity, length) {
    return array(this.id, task, identity, length)
  }
  node(task, identity, kind, name) {
    return node(this.id, task, identity, kind, name)
  }
  invalid(task, typeName) {
    return invalid(this.id, task, typeName)
  }
  unknownElement(task) {
    return unknownElement(this.id, task)
  }
  currentSpan(task) {
    return currentSpan(this.id, task)
  }
  fail(task, errorType, message) {
    return fail(this.id, task, errorType, message)
  }
  finish(task) {
    return finish(this.id, task)
  }
  takeError(task) {
    return takeError(this.id, task)
  }
  liveTasks() {
    return liveTasks(this.id)
  }
  enterAgent(task, hasProvider, provider, model, system, sandboxed = false) {
    return enterAgent(this.id, task, hasProvider, provider, model, system, sandboxed)
  }
  agentHandshakeDone(task) {
    return agentHandshakeDone(this.id, task)
  }
  enterSystem(task) {
    return enterSystem(this.id, task)
  }
  enterTransparent(task) {
    return enterTransparent(this.id, task)
  }
  enterScope(task, kind, name, resource, capture, attributes, sensitive) {
    return enterScope(this.id, task, kind, name, resource, capture, attributes, sensitive)
  }
  scopeInput(task) {
    return scopeInput(this.id, task)
  }
  scopeDone(task, output, attributes, sensitive) {
    return scopeDone(this.id, task, output, attributes, sensitive)
  }
  enterSkill(task, name, attributes, sensitive) {
    return enterSkill(this.id, task, name, attributes, sensitive)
  }
  skillDone(task, output, packageName, reference, attributes, sensitive) {
    return skillDone(this.id, task, output, packageName, reference, attributes, sensitive)
  }
  agentSkills(task) {
    return agentSkills(this.id, task)
  }
  errorMessage(task) {
    return errorMessage(this.id, task)
  }
  enterFollowUp(task) {
    return enterFollowUp(this.id, task)
  }
  grantTool(task, name, reference) {
    return grantTool(this.id, task, name, reference)
  }
  grantMcp(task, name, kind, reference) {
    return grantMcp(this.id, task, name, kind, reference)
  }
  agentPlan(task) {
    return agentPlan(this.id, task)
  }
  agentTools(task) {
    return agentTools(this.id, task)
  }
  agentMcp(task) {
    return agentMcp(this.id, task)
  }
  agentDone(task, value, output) {
    return agentDone(this.id, task, value, output)
  }
  /** The provider's `usage` for the ready Agent on top of `task` (before its agentDone). */
  agentUsage(task, usage) {
    return agentUsage(this.id, task, usage)
  }
  /** The evaluation's summed usage, or undefined when no provider reported any. */
  usage() {
    return evaluationUsage(this.id)
  }
  /** `evaluate(<Agent>prompt</Agent>)` entered in one call: `spanId\nparentSpanId\nsystem`, or a step code. */
  enterTextAgent(task, identity, hasProvider, provider, prompt) {
    return enterTextAgent(this.id, task, identity, hasProvider, provider, prompt)
  }
  /** The one-call Agent's result: the step code (Done: the task completed and was released). */
  finishTextAgent(task, value, output) {
    return finishTextAgent(this.id, task, value, output)
  }
  scheduleAgent(task) {
    return scheduleAgent(this.id, task)
  }
  releaseAgentSlot() {
    return releaseAgentSlot(this.id)
  }
  withdrawAgent(task) {
    return withdrawAgent(this.id, task)
  }
  drainAgentQueue() {
    return drainAgentQueue(this.id)
  }
  /** null, or the `<Workspace>` placement error (crates/aml-engine/src/workspace.rs). */
  claimWorkspace(task) {
    return claimWorkspace(this.id, task)
  }
  /** "root", "agent" or "text": the channel the primitive on top writes into. */
  channel(task) {
    return primitiveChannel(this.id, task)
  }
  openSpan(kind, name, parent, resource, attributes, sensitive) {
    return openSpan(this.id, kind, name, parent, resource, attributes, sensitive)
  }
  closeSpan(spanId, errorType, message, attributes, sensitive) {
    return closeSpan(this.id, spanId, errorType, message, attributes, sensitive)
  }
  point(spanId, parent, name, attributes, sensitive) {
    return point(this.id, spanId, parent, name, attributes, sensitive)
  }
  /** `openSpan("tool", name, parent, false)` with no attributes (src/hot_path/tool_span.rs). */
  openToolSpan(name, parent) {
    return openToolSpan(this.id, name, parent)
  }
  /** `closeSpan(spanId)` with status ok and no attributes. */
  closeToolSpan(spanId) {
    return closeToolSpan(this.id, spanId)
  }
}

// Workspace persistence (src/workspace*.rs): sessions over crates/aml-workspace, the
// filesystem store's operations, the local lock, and the JS storage adapter dispatcher.
export const {
  filesystemStorageAcquire,
  filesystemStorageDelete,
  filesystemStorageList,
  filesystemStorageRead,
  filesystemStorageRelease,
  filesystemStorageWrite,
  liveWorkspaceLocks,
  liveWorkspaceSessions,
  localWorkspaceAcquire,
  localWorkspaceLockProblem,
  localWorkspaceRelease,
  workspaceCancel,
  workspaceCancellation,
  workspaceCancellationDone,
  workspaceFilesystemAcquire,
  workspaceJsAcquire,
  workspaceRelease,
  workspaceSave,
  workspaceStorageDispatcherInstall,
  workspaceStorageDispatcherInstalled,
  workspaceStorageSegment,
} = binding

// The Docker Sandbox (src/process/docker.rs over crates/aml-docker): stateless calls over a socket
// and negotiated version; streamed execs by handle.
export const {
  dockerExec,
  dockerNegotiate,
  dockerRemove,
  dockerRun,
  dockerSpawn,
  dockerSpawnCloseStdin,
  dockerSpawnRead,
  dockerSpawnRelease,
  dockerSpawnWait,
  dockerSpawnWrite,
} = binding

// Remote Sandbox Workspace transfer (src/workspace/transfer.rs over aml_workspace::transfer).
export const { sandboxTransferMirror, sandboxTransferPack } = binding

// The engine's trace clock (trace-sink.js calibrates the records' `at` against it once).
export const { traceClock } = binding

// AML Studio (src/runs/, docs/STUDIO.md): the run store and the local server.
export const { runsList, runsPrune, runsRecorderClose, runsRecorderCreate, runsRecorderDispose, runsRecorderFinish, runsRecorderJournal, runsRecorderStart, studioClosed, studioStart, studioStop } = binding
