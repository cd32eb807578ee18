// A local Docker image that can run `node` (no registry): busybox plus this host's node
// binary and the shared libraries `ldd` names, imported with `docker import`. Built once per
// daemon; the ACP relay spec runs the scripted agent and relay.cjs inside it.
import { execFileSync } from "node:child_process"
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export const NODE_IMAGE = "aml-test-node:1"

type Docker = (args: string[], input?: Buffer) => string

function hasImage(docker: Docker): boolean {
  try {
    docker(["image", "inspect", NODE_IMAGE])
    return true
  } catch {
    return false
  }
}

function copyInto(rootfs: string, path: string): void {
  const target = join(rootfs, path)
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(path, target)
  chmodSync(target, 0o755)
}

/** Builds the image in the daemon `docker` talks to (a no-op when it is there). */
export function buildNodeImage(docker: Docker): void {
  if (hasImage(docker)) return
  const rootfs = mkdtempSync(join(tmpdir(), "aml-node-image-"))
  try {
    for (const dir of ["bin", "tmp", "workspace", "etc", "usr/local/bin"]) mkdirSync(join(rootfs, dir), { recursive: true })
    copyInto(rootfs, "/bin/busybox")
    for (const tool of execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" }).split("\n")) {
      if (tool !== "" && tool !== "busybox") symlinkSync("busybox", join(rootfs, "bin", tool))
    }
    chmodSync(join(rootfs, "tmp"), 0o1777)
    copyInto(rootfs, process.execPath)
    if (process.execPath !== "/usr/local/bin/node") symlinkSync(process.execPath, join(rootfs, "usr/local/bin/node"))
    // `ldd` lines: "libx.so => /path (addr)" or "/lib64/ld-linux… (addr)".
    for (const line of execFileSync("ldd", [process.execPath], { encoding: "utf8" }).split("\n")) {
      const path = /(\/\S+)\s+\(0x/.exec(line)?.[1]
      if (path !== undefined) copyInto(rootfs, path)
    }
    execFileSync("sh", ["-c", `printf 'root:x:0:0:root:/root:/bin/sh\\n' > ${join(rootfs, "etc/passwd")}`])
    const tar = execFileSync("tar", ["-C", rootfs, "-c", ...readdirSync(rootfs)], { maxBuffer: 1 << 30 })
    docker(["import", "--change", "ENV PATH=/usr/local/bin:/bin", "-", NODE_IMAGE], tar)
  } finally {
    rmSync(rootfs, { force: true, recursive: true })
  }
}
