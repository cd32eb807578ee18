// When Node exits after running a <Script>, its process supervisor must not outlive it. Before,
// the supervisor died by its parent-death signal only as Node exited, and was reparented to
// the nearest subreaper (PID 1 on most machines), which on some machines never reaps: every
// `aml run` left one zombie behind. Now the main thread's `exit` ends and reaps it first.
//
// Deterministic without timing: a python3 parent makes itself a child subreaper, runs Node,
// and after waiting for Node lists its own remaining children. Anything Node left behind is
// reparented to it by the kernel before Node's exit status is reported.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

import { expect, test } from "vitest"

const entry = fileURLToPath(new URL("../index.js", import.meta.url))
const jsxEntry = fileURLToPath(new URL("../jsx-runtime/index.js", import.meta.url))

const workload = (ending: string) => `
import { AmlRuntime, Script } from ${JSON.stringify(entry)}
import { jsx } from ${JSON.stringify(jsxEntry)}
const result = await new AmlRuntime().evaluate(jsx(Script, { command: "echo", args: ["ran"] }))
if (result.trim() !== "ran") throw new Error("unexpected Script result: " + result)
${ending}
`

const PARENT = `
import ctypes, os, subprocess, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("PR_SET_CHILD_SUBREAPER failed")
node = subprocess.run([sys.argv[1], "--input-type=module", "-e", sys.argv[2]])
me = str(os.getpid())
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open("/proc/%s/stat" % pid).read()
    except OSError:
        continue
    state, ppid = stat[stat.rindex(")") + 2:].split(" ")[:2]
    if ppid == me:
        left.append("%s:%s:%s" % (pid, state, open("/proc/%s/cmdline" % pid).read().replace("\\0", " ")[:60]))
for entry in left:
    os.kill(int(entry.split(":")[0]), 9)
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
print("node=%d left=%s" % (node.returncode, ";".join(left)))
`

test.each([
  ["ends on its own", ""],
  ["calls process.exit()", "process.exit(0)"],
])("Node that %s after a Script leaves no process behind", (_, ending) => {
  const run = spawnSync("python3", ["-c", PARENT, process.execPath, workload(ending)], { encoding: "utf8" })
  expect(run.stderr).toBe("")
  expect(run.stdout.trim()).toBe("node=0 left=")
})
