// Test Workspace providers over real temporary directories: what the persistence helper's
// localWorkspace will offer, without depending on it.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A fresh temporary directory; `cleanup()` removes it. */
export async function scratch(prefix = "aml-ws-test-") {
  const directory = await mkdtemp(join(tmpdir(), prefix))
  return { directory, cleanup: () => rm(directory, { force: true, recursive: true }) }
}

/** A WorkspaceProvider whose every lease materializes `directory` in place. */
export function directoryWorkspace(directory: string, name = "test-directory") {
  const calls: string[] = []
  let n = 0
  return {
    calls,
    provider: {
      name,
      async acquire() {
        n++
        calls.push("acquire")
        return {
          directory,
          handle: { kind: "test-directory" },
          id: `${name}-${n}`,
          save: async () => void calls.push("save"),
          release: async () => void calls.push("release"),
        }
      },
    },
  }
}
