// <Script> (INVENTORY SC-1): prop errors in the documented order, both forms, host execution
// (cwd rules, env, output bound, decoding, exit errors, missing commands, timeouts,
// cancellation). Sandbox execution and spans: script-sandbox.spec.tsx.
import { execFileSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join } from "node:path"

import { afterAll, describe, expect, test } from "vitest"

import { AmlRuntime, EvaluationError, Sandbox, Script } from "@aml-jsx/sdk"
import { DeterministicSandboxProvider } from "@aml-jsx/sdk/testing"

import { delay } from "./support/async.js"
import { expectAllGoneNow, readPidFile, tempDir } from "./support/processes.js"
import { rejection } from "./support/errors.js"

const dir = tempDir("aml-script-")
mkdirSync(join(dir.path, "apps/cli"), { recursive: true })
afterAll(() => dir.remove())

const runtime = new AmlRuntime({ cwd: dir.path })

async function expectEvaluationError(value: unknown, message: string, on = runtime) {
  const error = await rejection(on.evaluate(value as any))
  expect(error).toBeInstanceOf(EvaluationError)
  expect(error.message).toBe(message)
  return error
}

describe("prop errors, in the documented order", () => {
  test("1. a Sandbox whose runtime does not enforce the effective scope (before cwd errors)", async () => {
    const sandbox = new DeterministicSandboxProvider({ name: "narrow" })
    const on = new AmlRuntime({ sandboxProvider: sandbox })
    // A nested root narrows the session but not the lease runtime: supportsSandboxRuntime fails.
    await expectEvaluationError(
      <Sandbox>
        <Sandbox root="sub">
          <Script command="true" cwd="/absolute" />
        </Sandbox>
      </Sandbox>,
      '<Script> cannot execute because Sandbox provider "narrow" does not enforce the effective scope',
      on,
    )
  })

  test.each([
    ["", "must be a non-empty string"],
    ["   ", "must be a non-empty string"],
    [5, "must be a non-empty string"],
    ["/abs", "must be a relative forward-slash path"],
    ["apps\\cli", "must be a relative forward-slash path"],
    ["C:/apps", "must be a relative forward-slash path"],
    ["//server/share", "must be a relative forward-slash path"],
    ["../up", "cannot contain parent traversal"],
    ["apps/../../up", "cannot contain parent traversal"],
    ["apps/..", "cannot contain parent traversal"],
  ])("2. cwd %j: <Script> cwd %s (before timeoutMs)", async (cwd, problem) => {
    await expectEvaluationError(<Script command="true" cwd={cwd as any} timeoutMs={-1} />, `<Script> cwd ${problem}`)
  })

  test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "10"])(
    "3. timeoutMs %j (before the form checks)",
    async (timeoutMs) => {
      await expectEvaluationError(
        <Script {...({ timeoutMs } as any)} />,
        "<Script> timeoutMs must be a positive safe integer",
      )
    },
  )

  test.each([
    [{}, "<Script> requires exactly one of command or shell"],
    [{ command: "true", shell: "sh" }, "<Script> requires exactly one of command or shell"],
    [{ command: "true", children: "x", args: [1] }, "<Script command> cannot have children"],
    [{ command: "", args: [1] }, "<Script> command must be a non-empty normalized string"],
    [{ command: " true" }, "<Script> command must be a non-empty normalized string"],
    [{ command: 7 }, "<Script> command must be a non-empty normalized string"],
    [{ command: "true", args: [1] }, "<Script> args must contain only strings"],
    [{ command: "true", args: "a b" }, "<Script> args must contain only strings"],
    [{ shell: "sh", args: [], children: "true" }, "<Script shell> does not accept args"],
    [{ shell: "sh", args: ["x"], children: "true" }, "<Script shell> does not accept args"],
    [{ shell: "zsh", children: "true" }, '<Script> shell must be "sh", "bash", or "node"'],
    [{ shell: "", children: "true" }, '<Script> shell must be "sh", "bash", or "node"'],
  ])("4–9. %j", async (props, message) => {
    await expectEvaluationError(<Script {...(props as any)} />, message)
  })

  test("props are checked before children are evaluated", async () => {
    let evaluated = false
    const Child = () => {
      evaluated = true
      return "echo hi"
    }
    await expectEvaluationError(
      <Script shell="sh" timeoutMs={0}>
        <Child />
      </Script>,
      "<Script> timeoutMs must be a positive safe integer",
    )
    expect(evaluated).toBe(false)
  })
})

describe("forms", () => {
  test("command form runs the literal command with args, no shell interpolation", async () => {
    expect(await runtime.evaluate(<Script command="printf" args={["%s|", "$HOME", "a b"]} />)).toBe("$HOME|a b|")
  })

  test("shell form: sh and bash get the resolved source with -c", async () => {
    const Name = async () => "world"
    expect(
      await runtime.evaluate(
        <Script shell="sh">
          {"echo hello "}
          <Name />
        </Script>,
      ),
    ).toBe("hello world\n")
    expect(await runtime.evaluate(<Script shell="bash">{'echo "${BASH_VERSION:+bash}"'}</Script>)).toBe("bash\n")
  })

  test("shell form: node runs the source as an ES module", async () => {
    const source = 'import { sep } from "node:path"; console.log(typeof import.meta, sep)'
    expect(await runtime.evaluate(<Script shell="node">{source}</Script>)).toBe("object /\n")
  })

  test.each([undefined, "", "  \n\t ", ["", " "]])("shell source %j must resolve to non-empty text", async (children) => {
    await expectEvaluationError(<Script shell="sh">{children}</Script>, "<Script shell> must resolve to non-empty source")
  })

  test("the source is trimmed; stdout is not", async () => {
    expect(await runtime.evaluate(<Script shell="sh">{"\n\n  printf '  padded \\n\\n'  \n"}</Script>)).toBe(
      "  padded \n\n",
    )
  })

  test("stdout joins the surrounding channel; stderr does not", async () => {
    expect(await runtime.evaluate(["<", <Script shell="sh">{"echo out; echo err >&2"}</Script>, ">"])).toBe("<out\n>")
  })
})

describe("host execution", () => {
  test("starts in AmlRuntimeOptions.cwd with PWD and process.env", async () => {
    process.env.AML_SCRIPT_INHERITED = "yes"
    try {
      const out = await runtime.evaluate(<Script shell="sh">{'printf "%s|%s|%s" "$(pwd -P)" "$PWD" "$AML_SCRIPT_INHERITED"'}</Script>)
      expect(out).toBe(`${dir.path}|${dir.path}|yes`)
    } finally {
      delete process.env.AML_SCRIPT_INHERITED
    }
  })

  test("cwd resolves from AmlRuntimeOptions.cwd", async () => {
    const expected = join(dir.path, "apps/cli")
    expect(await runtime.evaluate(<Script cwd="./apps//cli/" command="pwd" />)).toBe(`${expected}\n`)
    expect(await runtime.evaluate(<Script cwd="apps/cli" shell="sh">{"echo $PWD"}</Script>)).toBe(`${expected}\n`)
  })

  test("the reference example: node --version from apps/cli with a timeout", async () => {
    const out = await runtime.evaluate(<Script cwd="apps/cli" command="node" args={["--version"]} timeoutMs={10_000} />)
    expect(out).toBe(execFileSync("node", ["--version"], { encoding: "utf8" }))
  })

  test("stdin is closed", async () => {
    expect(await runtime.evaluate(<Script command="cat" />)).toBe("")
  })

  test("non-UTF-8 output is decoded with replacement characters", async () => {
    expect(await runtime.evaluate(<Script shell="sh">{"printf 'a\\377\\376b\\342\\202'"}</Script>)).toBe("a\uFFFD\uFFFDb\uFFFD")
  })

  test("exactly 4 MiB of output is accepted", async () => {
    const out = await runtime.evaluate(<Script shell="sh">{"head -c 4194304 /dev/zero | tr '\\0' x"}</Script>)
    expect(out.length).toBe(4_194_304)
  })

  test.each([
    ["stdout", "head -c 5000000 /dev/zero"],
    ["stdout+stderr together", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2"],
    ["an endless flood", "yes"],
  ])("%s over 4 MiB: RangeError, the tree is killed", async (_, source) => {
    const error = await rejection(runtime.evaluate(<Script shell="sh">{source}</Script>))
    expect(error).toBeInstanceOf(RangeError)
    expect(error.message).toBe("<Script> host output exceeded 4194304 bytes")
  })

  test.each([
    ["echo oops >&2; exit 3", "<Script> exited with code 3: oops"],
    ["printf '\\n  two words \\n\\n' >&2; exit 1", "<Script> exited with code 1: two words"],
    ["echo out; exit 2", "<Script> exited with code 2"],
    ["echo '   ' >&2; exit 4", "<Script> exited with code 4"],
  ])("non-zero exit: %j", async (source, message) => {
    await expectEvaluationError(<Script shell="sh">{source}</Script>, message)
  })

  test("a leader killed by a signal", async () => {
    await expectEvaluationError(<Script shell="sh">{"echo dying >&2; kill -KILL $$"}</Script>, "<Script> exited from signal SIGKILL: dying")
  })

  test("a command that does not exist", async () => {
    const error = await expectEvaluationError(<Script command="aml-no-such-command" />, '<Script> could not start "aml-no-such-command"')
    expect(error.cause).toMatchObject({ code: "ENOENT", message: "spawn aml-no-such-command ENOENT" })
  })

  test("an argument with a NUL byte cannot start", async () => {
    const error = await expectEvaluationError(<Script command="printf" args={["a\0b"]} />, '<Script> could not start "printf"')
    expect(error.cause.message).toMatch(/nul byte/)
  })

  test("the largest timeoutMs is accepted", async () => {
    expect(await runtime.evaluate(<Script command="echo" args={["ok"]} timeoutMs={Number.MAX_SAFE_INTEGER} />)).toBe("ok\n")
  })

  test("a cwd that does not exist", async () => {
    const error = await expectEvaluationError(<Script command="true" cwd="missing" />, '<Script> could not start "true"')
    expect(error.cause.message).toBe(`spawn true ENOENT: cwd "${join(dir.path, "missing")}" does not exist`)
  })

  test("timeoutMs kills the tree and fails", async () => {
    const pidFile = join(dir.path, "timeout.pids")
    const started = Date.now()
    await expectEvaluationError(
      <Script shell="sh" timeoutMs={300}>{`sleep 30 & echo $! > ${pidFile}; wait`}</Script>,
      "<Script> timed out after 300 ms",
    )
    expect(Date.now() - started).toBeLessThan(20_000) // far below the sleep: the timeout, not the sleep, ended it
    expectAllGoneNow(await readPidFile(pidFile, 1))
  })

  test("cancellation kills the tree and rethrows the reason unchanged", async () => {
    const pidFile = join(dir.path, "cancel.pids")
    const controller = new AbortController()
    const reason = new Error("stop the script")
    const run = runtime.evaluate(<Script shell="sh">{`sleep 30 & echo $! > ${pidFile}; wait`}</Script>, {
      signal: controller.signal,
    })
    const [pid] = await readPidFile(pidFile, 1)
    await delay(10)
    controller.abort(reason)
    expect(await rejection(run)).toBe(reason)
    expectAllGoneNow([pid!])
  })
})
