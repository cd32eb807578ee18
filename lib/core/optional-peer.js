// Optional peer dependencies (@daytona/sdk, modal, @aws-sdk/client-s3) are imported on first
// use, once; a failed import is not cached, so installing the package later in a long-lived
// process works without a restart. The caller keeps the literal `import("…")` (bundlers and
// readers see which package it is) and its own documented message.

/** A loader that runs `load()` once and, on failure, throws `failure(cause)` and forgets it. */
export function optionalPeer(load, failure) {
  let loading
  return () =>
    (loading ??= load().catch((cause) => {
      loading = undefined
      throw failure(cause)
    }))
}
