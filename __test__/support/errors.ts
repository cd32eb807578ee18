// Shared helpers for specs that assert how an evaluation fails.

/** The message of the EvaluationError thrown by `evaluate()` outside an active component. */
export const ONLY_ACTIVE = "evaluate() is only available while an AML component is active"

/** Resolves with what `promise` rejected with; fails if it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error("expected the evaluation to reject")
    },
    (error: unknown) => error,
  )
}
