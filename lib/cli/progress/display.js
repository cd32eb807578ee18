// `aml run`'s live progress block on a terminal (docs/CLI.md "Progress"). The block sits
// at the bottom of stderr and is redrawn in place with ANSI cursor movement: every line it
// draws ends with a newline, so the cursor always rests at the start of the line below it,
// and a redraw moves up over the block and clears to the end of the screen. Anything else
// written to stdout or stderr meanwhile (the CLI's own lines, --trace, a workflow's
// console.log) first clears the block, is written as is, and the block is drawn again
// below it; while such a write has left the cursor mid-line the block stays hidden, so a
// partial line is never interleaved. stop() (the run finished, the process exits) clears
// the block and gives the streams back untouched.

import { ProgressTracker } from "./tracker.js"
import { renderProgress } from "./render.js"

const TICK_MS = 100

export class ProgressDisplay {
  tracker = new ProgressTracker()
  #stderr
  #stdout
  #writeErr
  #writeOut
  #ownWrite
  #lines = 0
  #midLine = false
  #timer = undefined
  #scheduled = false
  #stopped = false
  #frame = 0
  #startedAt = undefined
  #signal
  #onExit = () => this.stop()

  /** `signal`: the run's cancellation; once aborted the header says the run is stopping. */
  constructor({ stdout = process.stdout, stderr = process.stderr, signal } = {}) {
    this.#stdout = stdout
    this.#stderr = stderr
    this.#signal = signal
    this.#writeErr = stderr.write
    this.#writeOut = stdout.write
    this.#ownWrite = [Object.hasOwn(stderr, "write"), Object.hasOwn(stdout, "write")]
    // Foreign writes go around the block (see the header comment).
    stderr.write = (chunk, ...rest) => this.#around(this.#writeErr, stderr, chunk, rest)
    stdout.write = (chunk, ...rest) => this.#around(this.#writeOut, stdout, chunk, rest)
    // process.exit() (a second signal, the cleanup deadline) skips finally blocks, not this.
    process.on("exit", this.#onExit)
  }

  /** The trace sink: metadata only (no captureContent), never throws into the runtime. */
  sink = (event) => {
    if (this.#stopped) return
    try {
      if (event.type === "span.start" && event.kind === "evaluation") this.#begin()
      if (this.tracker.apply(event, performance.now())) this.#schedule()
    } catch {
      // A display fault must not become a trace-listener failure of the run.
    }
  }

  /** Writes `line` on stderr above the block. */
  log(line) {
    this.#stderr.write(`${line}\n`)
  }

  /** Clears the block and restores the streams; safe to call more than once. */
  stop() {
    if (this.#stopped) return
    this.#stopped = true
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#clear()
    // Back to exactly what was there: the prototype's method, or a write of someone else's.
    if (this.#ownWrite[0]) this.#stderr.write = this.#writeErr
    else delete this.#stderr.write
    if (this.#ownWrite[1]) this.#stdout.write = this.#writeOut
    else delete this.#stdout.write
    process.removeListener("exit", this.#onExit)
  }

  #begin() {
    if (this.#startedAt !== undefined) return
    this.#startedAt = performance.now()
    // Elapsed times tick while nothing else happens; unref'd, so it never keeps the run alive.
    this.#timer = setInterval(() => this.#draw(), TICK_MS)
    this.#timer.unref?.()
    // Drawn at once: the header is on screen before the first step of the run starts.
    this.#draw()
  }

  // Coalesces the redraws of one burst of trace events into one.
  #schedule() {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#draw()
    })
  }

  #around(write, stream, chunk, rest) {
    if (this.#stopped) return write.call(stream, chunk, ...rest)
    this.#clear()
    const result = write.call(stream, chunk, ...rest)
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString("utf8") : ""
    if (text.length > 0) this.#midLine = !text.endsWith("\n")
    this.#schedule()
    return result
  }

  #clear() {
    if (this.#lines === 0) return
    // \r first: a terminal echo (^C) may have moved the cursor off column 0.
    this.#writeErr.call(this.#stderr, `\r\x1b[${this.#lines}A\x1b[J`)
    this.#lines = 0
  }

  #draw() {
    if (this.#stopped || this.#startedAt === undefined || this.#midLine) return
    const lines = renderProgress(this.tracker, {
      now: performance.now(),
      startedAt: this.#startedAt,
      width: this.#stderr.columns || 80,
      height: this.#stderr.rows || 24,
      status: this.#signal?.aborted ? "stopping" : "running",
      frame: this.#frame++,
    })
    this.#clear()
    this.#writeErr.call(this.#stderr, `${lines.join("\n")}\n`)
    this.#lines = lines.length
  }
}
