// A timeout a Node timer can hold: a positive integer of milliseconds up to 2^31 − 1 (a
// larger delay fires at once, with a TimeoutOverflowWarning). Each caller keeps its own
// documented message; the bound is decided here.
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/** True for a positive integer number of milliseconds a timer can wait. */
export function isTimerDelay(ms) {
  return Number.isInteger(ms) && ms > 0 && ms <= MAX_TIMER_DELAY_MS
}
