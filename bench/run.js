// `npm run bench`: every benchmark the issues ask for, medians only.
import { agentBenchmarks } from "./agents.js"
import { evaluatorBenchmarks } from "./evaluator.js"
import { nativeToolBenchmarks } from "./native-tools.js"
import { scriptBenchmarks } from "./scripts.js"
import { toolBenchmarks } from "./tools.js"

console.log(`node ${process.version}, ${process.platform}-${process.arch}`)
await evaluatorBenchmarks()
await agentBenchmarks()
await toolBenchmarks()
await nativeToolBenchmarks()
await scriptBenchmarks()
