// `aml run`'s signal owner (cli.mdx "Interrupting a run"): ProcessSignalCancellation's
// behaviour (lib/process/signal-owner.js) with the CLI's own abort reason, `aml run interrupted by SIG…`.

import { SignalOwner } from "../process/signal-owner.js"

export class RunSignalCancellation extends SignalOwner {
  constructor(deadlineMs = 10_000) {
    super(deadlineMs, (name) => `aml run interrupted by ${name}`)
  }
}
