// Runs one benchmark group in this process: `node bench/group.js <name>`.
const groups = {
  acp: async () => (await import("./acp.js")).acpBenchmarks(),
  agents: async () => (await import("./agents.js")).agentBenchmarks(),
  cli: async () => (await import("./cli.js")).cliBenchmarks(),
  docker: async () => (await import("./docker.js")).dockerBenchmarks(),
  durable: async () => (await import("./durable.js")).durableBenchmarks(),
  scaling: async () => (await import("./scaling.js")).scalingBenchmarks(),
  faults: async () => (await import("./faults.js")).faultBenchmarks(),
  evaluator: async () => (await import("./evaluator.js")).evaluatorBenchmarks(),
  journal: async () => (await import("./journal.js")).journalBenchmarks(),
  otel: async () => (await import("./otel.js")).otelBenchmarks(),
  "native-tools": async () => (await import("./native-tools.js")).nativeToolBenchmarks(),
  studio: async () => (await import("./studio.js")).studioBenchmarks(),
  scripts: async () => (await import("./scripts.js")).scriptBenchmarks(),
  tools: async () => (await import("./tools.js")).toolBenchmarks(),
  workspaces: async () => (await import("./workspaces.js")).workspaceBenchmarks(),
}

const run = groups[process.argv[2]]
if (run === undefined) {
  console.error(`unknown benchmark group ${process.argv[2]}; known: ${Object.keys(groups).join(", ")}`)
  process.exit(2)
}
await run()
