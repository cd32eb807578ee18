// The `hint:` lines `aml run` adds after a diagnostic (docs/CLI.md "Hints"): for the
// mistakes a newcomer makes first, the fix in one line. The diagnostic itself is untouched;
// a hint is chosen by matching the messages of the whole failure (the error, its causes,
// aggregate members), so it also fires when the mistake is wrapped (a Sandbox acquisition
// failure caused by a provider's option check, one branch of a <Parallel>).

// The SDK marks a prop type error with what it received (lib/errors/prop-error.js); a
// Symbol.for key, so an error from another copy of the SDK carries the same mark.
const RECEIVED = Symbol.for("@aml-jsx/sdk/received-type")

function receivedOf(value) {
  if (typeof value !== "object" || value === null) return undefined
  try {
    return value[RECEIVED]
  } catch {
    return undefined
  }
}

const SANDBOX_FACTORIES = { Local: "localSandbox", Docker: "dockerSandbox", Daytona: "daytonaSandbox", Modal: "modalSandbox" }

// [pattern, hint(match, value)]; a hint returning undefined adds nothing.
const HINTS = [
  [
    /^Agent (?:span|trace)-\d+ has no provider$/,
    () =>
      "run it on a coding agent with `--agent opencode` (or codex, copilot, glm, pi; `:<model>` picks a model), " +
      "pass provider={…} on the <Agent>, or export a main() that builds " +
      "new AmlRuntime({ agentProvider }) and returns runtime.evaluate(…) of the tree",
  ],
  [
    /^(Local|Docker|Daytona|Modal) Sandbox requires an active Workspace or configured workspace$/,
    (match) =>
      `give the provider a directory, ${SANDBOX_FACTORIES[match[1]]}({ workspace: "./path" }), ` +
      "or put the <Sandbox> inside a <Workspace provider={…}>",
  ],
  [
    /^(evaluate|useContext)\(\) is only available while an AML component is active$/,
    (match) =>
      `${match[1]}() works only while a component runs: move the call into an async function component ` +
      `(async function Step() { … await ${match[1] === "evaluate" ? "evaluate(<Agent …/>)" : "useContext(Ctx)"} … }) ` +
      "and export <Step />, not a top-level or main() call",
  ],
  [
    /^(<\w+(?:\.Provider)?>) (\S+(?: \S+)?) must be /,
    (match, value) => {
      const received = receivedOf(value)
      return typeof received === "string" ? `the ${match[2]} prop of ${match[1]} received ${received}` : undefined
    },
  ],
  [
    /^AML journal ".*" belongs to workflow /,
    () => "this --journal file records another workflow or export: pass another file, or delete it to start over",
  ],
]

/** The hints for a failure, given every value of its diagnostic and how to read a message. */
export function hintsFor(values, messageOf) {
  const hints = []
  for (const value of values) {
    const message = messageOf(value)
    for (const [pattern, hint] of HINTS) {
      const match = pattern.exec(message)
      const text = match === null ? undefined : hint(match, value)
      if (text !== undefined && !hints.includes(text)) hints.push(text)
    }
  }
  return hints
}
