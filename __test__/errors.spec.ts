import { describe, expect, test } from "vitest"

import { EvaluationError, ToolInputError, ToolOutputError, WorkspaceConflictError } from "@aml-jsx/sdk"

describe("error classes", () => {
  test.each([
    [EvaluationError, "EvaluationError"],
    [ToolInputError, "ToolInputError"],
    [ToolOutputError, "ToolOutputError"],
  ] as const)("%o has its name, keeps cause and has no code", (Class, name) => {
    const cause = new Error("root")
    const error = new Class("message", { cause })
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe(name)
    expect(error.message).toBe("message")
    expect(error.cause).toBe(cause)
    expect("code" in error).toBe(false)
  })

  test("WorkspaceConflictError carries the workspace id, code and exact message", () => {
    const error = new WorkspaceConflictError("ws-1")
    expect(error.name).toBe("WorkspaceConflictError")
    expect(error.code).toBe("AML_WORKSPACE_CONFLICT")
    expect(error.workspaceId).toBe("ws-1")
    expect(error.message).toBe('Workspace "ws-1" already has an active writer')
  })

  test("WorkspaceConflictError.is is structural and checks the id when given", () => {
    const error = new WorkspaceConflictError("ws-1")
    expect(WorkspaceConflictError.is(error)).toBe(true)
    expect(WorkspaceConflictError.is(error, "ws-1")).toBe(true)
    expect(WorkspaceConflictError.is(error, "other")).toBe(false)
    expect(WorkspaceConflictError.is({ code: "AML_WORKSPACE_CONFLICT", workspaceId: "x" }, "x")).toBe(true)
    expect(WorkspaceConflictError.is(new Error("no"))).toBe(false)
    expect(WorkspaceConflictError.is(null)).toBe(false)
    const hostile = {
      get code(): string {
        throw new Error("boom")
      },
    }
    expect(WorkspaceConflictError.is(hostile)).toBe(false)
  })
})
