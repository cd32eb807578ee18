// `aml run`'s hint lines and readable cause chains (docs/CLI.md "Failures", "Hints"): the
// documented diagnostic lines stay as they are, a `hint:` line follows for the common
// mistakes, non-Error causes (a schema's issue list, a plain object) print readably, and
// a <Parallel>'s members keep their own causes.
import { describe, expect, it } from "vitest"

import { diagnostics, fixture, runCli } from "./support/cli.js"

const hints = fixture("hints.tsx")
const causes = fixture("causes.tsx")

async function failure(file: string, entry: string) {
  const result = await runCli(["run", file, "--entry", entry])
  expect(result).toMatchObject({ code: 1, stdout: "" })
  return diagnostics(result.stderr)
}

describe("hints", () => {
  it("an Agent without a provider: pass provider={…} or build a runtime with agentProvider in main()", async () => {
    expect(await failure(hints, "noProvider")).toBe(
      "aml: Agent span-1 has no provider\n" +
        "hint: run it on a coding agent with `--agent opencode` (or codex, copilot, glm, pi; `:<model>` picks a model), pass provider={…} on the <Agent>, or export a main() that builds new AmlRuntime({ agentProvider }) " +
        "and returns runtime.evaluate(…) of the tree\n",
    )
  })

  it("a local Sandbox without a workspace: localSandbox({ workspace }) or an enclosing <Workspace>", async () => {
    expect(await failure(hints, "sandboxWithoutWorkspace")).toBe(
      'aml: Sandbox provider "local" failed to acquire\n' +
        "  caused by: Local Sandbox requires an active Workspace or configured workspace\n" +
        'hint: give the provider a directory, localSandbox({ workspace: "./path" }), or put the <Sandbox> inside a <Workspace provider={…}>\n',
    )
  })

  it("evaluate() outside a component: move it into an async component", async () => {
    expect(await failure(hints, "evaluateInMain")).toBe(
      "aml: evaluate() is only available while an AML component is active\n" +
        "hint: evaluate() works only while a component runs: move the call into an async function component " +
        "(async function Step() { … await evaluate(<Agent …/>) … }) and export <Step />, not a top-level or main() call\n",
    )
  })

  it("prop type errors name the type of the value received", async () => {
    expect(await failure(hints, "numberModel")).toBe(
      "aml: <Agent> model must be a string\nhint: the model prop of <Agent> received a number (42)\n",
    )
    expect(await failure(hints, "paddedCommand")).toBe(
      "aml: <Script> command must be a non-empty normalized string\n" +
        "hint: the command prop of <Script> received a string with leading or trailing whitespace\n",
    )
  })

  it("adds nothing to a failure it has no hint for", async () => {
    const result = await runCli(["run", fixture("throws.tsx")])
    expect(result.stderr).not.toContain("hint:")
  })
})

describe("cause chains", () => {
  it("prints a schema failure's issue list one issue a line, not [object Object]", async () => {
    expect(await failure(causes, "schema")).toBe(
      'aml: Agent "rater" (span-1) returned invalid structured output\n' +
        "  caused by: Agent structured output failed schema validation\n" +
        "  caused by: 2 schema issues:\n" +
        "    - score: Invalid input: expected number, received string\n" +
        "    - reason: Invalid input: expected string, received undefined\n",
    )
  })

  it("prints a plain-object cause as JSON", async () => {
    expect(await failure(causes, "objectCause")).toBe('aml: upload failed\n  caused by: {"status":503,"retryAfter":"30s"}\n')
  })

  it("keeps each <Parallel> member's causes under its including: line", async () => {
    expect(await failure(causes, "parallel")).toBe(
      "aml: AML Parallel branches failed\n" +
        '  including: Agent "rater" (span-1) returned invalid structured output\n' +
        "    caused by: Agent structured output failed schema validation\n" +
        "    caused by: 2 schema issues:\n" +
        "      - score: Invalid input: expected number, received string\n" +
        "      - reason: Invalid input: expected string, received undefined\n" +
        "  including: publish failed\n" +
        "    caused by: registry rejected the package\n" +
        "    caused by: 401 Unauthorized\n",
    )
  })

  it("lists the members of an aggregate inside the chain, with their causes", async () => {
    expect(await failure(causes, "nestedAggregate")).toBe(
      "aml: release failed\n" +
        "  caused by: 2 cleanups failed\n" +
        "    including: lease expired\n" +
        "    including: bucket gone\n" +
        "      caused by: 404 Not Found\n",
    )
  })
})
