#!/usr/bin/env node
// The `aml` command of @aml-jsx/sdk (`npx aml run workflow.tsx`). See docs/CLI.md.
import { main } from "../lib/cli/main.js"

// exitCode, not exit(): Node ends once the run's cleanup settled and stdout drained.
process.exitCode = await main(process.argv.slice(2))
