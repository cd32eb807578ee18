// Small async helpers shared by several specs (Context, Parallel, events, …).

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export type Deferred<T = void> = { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void }

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, reject, resolve }
}

/** Polls macrotask by macrotask until `condition` holds; fails after ~2 s. */
export async function until(condition: () => boolean, what = "condition"): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return
    await delay(5)
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** A trace sink that records every event (content captured, so attributes are complete). */
export function traceRecorder() {
  const events: any[] = []
  const sink = Object.assign((event: any) => void events.push(event), { captureContent: true })
  return { events, sink }
}

/** An Agent provider that answers with its prompt, optionally wrapped, after `ms`. */
export function echoProvider(name = "p", ms = 0, wrap = (prompt: string) => prompt) {
  const requests: any[] = []
  return {
    requests,
    provider: {
      name,
      async run(request: any) {
        requests.push(request)
        if (ms > 0) await delay(ms)
        return { text: wrap(request.prompt) }
      },
    },
  }
}
