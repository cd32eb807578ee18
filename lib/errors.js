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
  constructor(message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = "WorkspaceConflictError"
    this.code = WORKSPACE_CONFLICT
    this.workspaceId = options.workspaceId
  }

  /** True for conflicts raised by any physical copy of the SDK (no `instanceof` needed). */
  static is(value) {
    return (
      typeof value === "object" &&
      value !== null &&
      value.code === WORKSPACE_CONFLICT &&
      value.name === "WorkspaceConflictError"
    )
  }
}

export const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"
