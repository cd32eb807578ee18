// How far `Date.now()` is ahead of the performance timeline (`performance.timeOrigin +
// performance.now()`), to well under a millisecond.
//
// The two disagree: Node fixes `performance.timeOrigin` once, at process start, and the wall
// clock is slewed or stepped afterwards. The OTel SDK starts the spans it times itself at
// `Date.now()`, a whole millisecond rounded down, so AML's spans must sit on that clock too.
// One reading of `Date.now() - performanceNow` is the drift minus the fraction of the current
// millisecond already gone: up to 1 ms early, which put an AML span before a user span that
// began earlier in the same millisecond. At the instant `Date.now()` ticks that fraction is
// ~0, so the drift is read there once (a wait of usually under a millisecond) and kept while
// later readings agree with it; a reading that disagrees means the wall clock moved, and
// calibrates again.

/** How far a reading may sit outside the kept drift's millisecond before it counts as a move. */
const TOLERANCE_MS = 0.05
/** Ticks of Date.now() read at most while calibrating. */
const MAX_TICKS = 4
/** Readings at most while calibrating (~0.1 µs each, so ~20–40 ms of a frozen Date.now()). */
const MAX_READS = 200_000
/** How closely a tick must be bounded by performance times to be used (error: half of it). */
const TICK_BOUNDS_MS = 0.1
/** A tick bounded this closely ends the wait (its iteration took no pause). */
const TICK_CLOSE_MS = 0.005
/** Calibrations are at least this far apart, so a wall clock moving often costs little. */
const RECALIBRATE_AFTER_MS = 1000
/** After a calibration that saw no usable tick (fake timers freeze Date.now()). */
const RETRY_UNCALIBRATED_MS = 60_000

const origin = performance.timeOrigin
let drift
let nextCalibration = -Infinity

function reading() {
  return Date.now() - (origin + performance.now())
}

/**
 * The drift read at a tick of Date.now(), or undefined when no tick was seen closely enough.
 * The tick happened between the previous reading of Date.now() and this one, so the
 * performance times read just before the previous one and just after this one bound it, and
 * their midpoint is off by at most half their distance. A pause in between (a collection, the
 * thread preempted) widens the bounds, so the narrowest of a few ticks is kept, and the first
 * one bounded to a few microseconds ends the wait. The wait is counted in readings, not in
 * time, so a thread preempted for milliseconds still sees its ticks.
 */
function atTick() {
  let best
  let bestWidth = TICK_BOUNDS_MS
  let ticks = 0
  let before = performance.now()
  let last = Date.now()
  for (let reads = 0; reads < MAX_READS; reads++) {
    const start = performance.now()
    const now = Date.now()
    const end = performance.now()
    if (now !== last) {
      const width = end - before
      if (width < bestWidth) {
        best = now - (origin + (before + end) / 2)
        if (width <= TICK_CLOSE_MS) return best
        bestWidth = width
      }
      if (++ticks === MAX_TICKS) return best
      last = now
    }
    before = start
  }
  return best
}

/** `Date.now()` minus the performance timeline, in milliseconds with sub-millisecond precision. */
export function wallClockDrift() {
  const quantized = reading()
  // A reading is the drift minus [0, 1) ms: it agrees while drift - 1 < reading <= drift.
  if (drift !== undefined && quantized <= drift + TOLERANCE_MS && quantized > drift - 1 - TOLERANCE_MS) {
    return drift
  }
  const at = performance.now()
  if (at < nextCalibration) {
    // Moved again soon after a calibration: take the reading (at most 1 ms early) until the
    // next one is due.
    drift = quantized
    return drift
  }
  const calibrated = atTick()
  // No usable tick in MAX_READS readings: Date.now() is frozen (fake timers) or the thread
  // is starved; wait longer before the next try.
  nextCalibration = at + (calibrated === undefined ? RETRY_UNCALIBRATED_MS : RECALIBRATE_AFTER_MS)
  drift = calibrated ?? quantized
  return drift
}
