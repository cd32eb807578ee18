// @aml-jsx/sdk/restate: AML workflows as durable Restate workflows (docs/DURABLE.md). Its peer
// @restatedev/restate-sdk is optional and loaded on first use; this entry needs Node >= 22.

export { amlWorkflow, DEFAULT_ABORT_TIMEOUT, DEFAULT_INACTIVITY_TIMEOUT } from "../lib/durable/workflow.js"
export { createRestateJournal } from "../lib/durable/restate-journal.js"
