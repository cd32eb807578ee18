// The two ways <File> and <Include path> reach a Sandbox's files: from the host (a local
// Sandbox, whose lease the built-in provider records as host files) and through the guest
// script (the same lease behind a fresh handle, which no provider recorded).
import { AmlRuntime, defineSandboxProvider, localSandbox } from "@aml-jsx/sdk"

export type FilePath = "host" | "guest"

/** A runtime whose Sandboxes are local ones in `root`, served by `path`. */
export function sandboxRuntime(path: FilePath, root: string): AmlRuntime {
  const local = localSandbox({ workspace: root })
  if (path === "host") return new AmlRuntime({ sandboxProvider: local })
  const wrapped = defineSandboxProvider({
    name: "wrapped-local",
    async acquire(request) {
      const lease = await local.acquire(request)
      return { handle: { wrapped: true }, id: lease.id, release: () => lease.release(), runtime: lease.runtime }
    },
  })
  return new AmlRuntime({ sandboxProvider: wrapped })
}
