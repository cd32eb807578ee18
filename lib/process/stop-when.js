// The one deadline-and-abort rule of every SandboxProcess (local, Docker, remote): stop once
// when the signal aborts (at once if it already has) or `timeoutMs` passes, whichever comes
// first. It is JS, not a Rust limit, because what "stop" means is JS work the contract puts
// first: PA-8 says an abort or timeout triggers `kill()`, which runs the caller's
// `beforeKill`, and a remote command is stopped through its JS SDK. The process tree itself
// is killed and reaped by Rust (crates/aml-process, crates/aml-docker).

/**
 * Arms `stop(reason, cause)` (`cause` is "abort" or "timeout"; `reason` is the signal's
 * reason on abort). Returns the disarm function, to call once the process settled.
 */
export function stopWhen(signal, timeoutMs, stop) {
  let timer
  let stopped = false
  const once = (reason, cause) => {
    if (stopped) return
    stopped = true
    stop(reason, cause)
  }
  const onAbort = () => once(signal.reason, "abort")
  if (timeoutMs !== undefined) timer = setTimeout(() => once(undefined, "timeout"), timeoutMs)
  if (signal !== undefined) {
    if (signal.aborted) onAbort()
    else signal.addEventListener("abort", onAbort, { once: true })
  }
  return () => {
    clearTimeout(timer)
    signal?.removeEventListener("abort", onAbort)
  }
}
