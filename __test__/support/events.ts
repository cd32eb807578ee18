// Helpers for the lifecycle and trace event specs (events-*.spec.tsx).

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Waits for the rejection handlers of dropped listener promises to run. */
export const drain = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A trace sink that records every event; `captureContent` is set only when given. */
export function recorder(captureContent?: boolean) {
  const events: any[] = []
  const sink: any = (event: any) => {
    events.push(event)
  }
  if (captureContent !== undefined) sink.captureContent = captureContent
  return { events, sink }
}

/** Resolves with what `promise` rejected with; fails if it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected the promise to reject")
}

/** Whether `value` and every data property reachable from it are frozen. */
export function isDeepFrozen(value: any, seen = new Set<any>()): boolean {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return true
  if (seen.has(value)) return true
  seen.add(value)
  if (!Object.isFrozen(value)) return false
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!
    if ("value" in descriptor && !isDeepFrozen(descriptor.value, seen)) return false
  }
  return true
}
