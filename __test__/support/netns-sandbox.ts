// A test Sandbox whose guest cannot reach the host's loopback: the Local Sandbox, with every
// exec and spawn entered into a private network namespace (`unshare -n`, its own `lo`) held
// open by one sleeping process per lease. Files and processes are the host's, the network is
// not, which is exactly the case the Sandbox MCP relay exists for. Needs root (or
// CAP_SYS_ADMIN) and util-linux; `netnsAvailable()` says whether this machine has them.
import { spawn, spawnSync } from "node:child_process"

import { localSandbox } from "@aml-jsx/sdk"

export function netnsAvailable(): boolean {
  const probe = spawnSync("unshare", ["-n", "--", "true"], { stdio: "ignore" })
  const enter = spawnSync("nsenter", ["--version"], { stdio: "ignore" })
  return probe.status === 0 && enter.status === 0
}

export interface Spawned {
  command: string
  args: string[]
  id: string
}

/** The provider, and every spawn its leases made (after nsenter, the guest command line). */
export function netnsSandbox(workspace: string) {
  const local = localSandbox({ workspace })
  const spawned: Spawned[] = []
  const provider = {
    name: "netns",
    async acquire(request: any) {
      const holder = spawn("unshare", ["-n", "--", "sh", "-c", "ip link set lo up && echo up && exec sleep 100000"], {
        stdio: ["ignore", "pipe", "inherit"],
      })
      await new Promise<void>((resolve, reject) => {
        holder.once("error", reject)
        holder.stdout!.once("data", () => resolve())
        holder.once("exit", (code) => reject(new Error(`netns holder exited with ${code}`)))
      })
      const enter = (command: string, args: string[]) => ["-t", String(holder.pid), "-n", "--", command, ...args]
      const lease = await local.acquire(request)
      const runtime = lease.runtime
      return {
        handle: { kind: "netns", pid: holder.pid },
        id: lease.id,
        async release() {
          try {
            await lease.release()
          } finally {
            holder.kill("SIGKILL")
          }
        },
        runtime: {
          access: runtime.access,
          cwd: runtime.cwd,
          exec: (command: string, args: string[] = [], options?: any) => runtime.exec("nsenter", enter(command, args), options),
          root: runtime.root,
          async spawn(command: string, args: string[] = [], options?: any) {
            const child = await runtime.spawn("nsenter", enter(command, args), options)
            spawned.push({ args, command, id: child.id })
            return child
          },
        },
      }
    },
  }
  return { provider, spawned }
}
