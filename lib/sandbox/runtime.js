// supportsSandboxRuntime (INVENTORY SB-3): the structural compatibility check built-in ACP
// Agents and <Script> use. A nested <Sandbox> that narrows root or access no longer matches
// the lease runtime (which keeps the outer root and access), so those callers reject it;
// narrowing only cwd keeps the match.

/** True iff the session's runtime can exec and spawn with the session's root and access. */
export function supportsSandboxRuntime(session) {
  // A compatibility probe must never throw: hostile getters and proxies answer false.
  try {
    const runtime = session.lease.runtime
    return (
      typeof runtime.exec === "function" &&
      typeof runtime.spawn === "function" &&
      runtime.root === session.root &&
      runtime.access === session.access
    )
  } catch {
    return false
  }
}
