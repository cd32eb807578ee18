// "start" and "finish" dispatch (INVENTORY §2.1). Both run runtime listeners first, then
// evaluation-local ones, with component evaluate() masked. start is serial and fail-fast;
// finish runs every listener and aggregates failures.

import { masked } from "./component-scope.js"
import { callAdopting } from "./thenable.js"

export async function dispatchStart(registries, event) {
  for (const registry of registries) {
    for (const entry of registry.take("start")) await masked(callAdopting, entry.listener, event)
  }
}

export async function dispatchFinish(registries, event) {
  const errors = []
  for (const registry of registries) {
    for (const entry of registry.take("finish")) {
      try {
        await masked(callAdopting, entry.listener, event)
      } catch (error) {
        errors.push(error)
      }
    }
  }
  if (errors.length === 1) throw errors[0]
  if (errors.length > 1) throw new AggregateError(errors, "AML finish listeners failed")
}
