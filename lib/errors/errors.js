// Public error classes. Only WorkspaceConflictError carries an AML code; the others are
// identified by `name` (docs-next "Errors and recovery").

export class EvaluationError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = "EvaluationError"
  }
}

export class ToolInputError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = "ToolInputError"
  }
}

export class ToolOutputError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = "ToolOutputError"
  }
}

const WORKSPACE_CONFLICT = "AML_WORKSPACE_CONFLICT"

export class WorkspaceConflictError extends Error {
  constructor(workspaceId) {
    super(`Workspace "${workspaceId}" already has an active writer`)
    this.name = "WorkspaceConflictError"
    this.code = WORKSPACE_CONFLICT
    this.workspaceId = workspaceId
  }

  /**
   * A structural, copy-safe check: reads `code` and `workspaceId` once each and treats an
   * accessor that throws as "not a conflict".
   */
  static is(value, workspaceId) {
    if (typeof value !== "object" || value === null) return false
    try {
      if (value.code !== WORKSPACE_CONFLICT) return false
      return workspaceId === undefined || value.workspaceId === workspaceId
    } catch {
      return false
    }
  }
}

export const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"
export const TOOLS_ONLY_ACTIVE = "Tools can only be called while an AML component is active"
