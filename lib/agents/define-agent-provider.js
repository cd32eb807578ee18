// defineAgentProvider (INVENTORY PA-2): the same shape check the runtime applies when a
// provider enters it, done early so a malformed provider fails where it is defined.

import { captureAgentProvider } from "../core/provider-shape.js"

/** Validates `implementation` as an AgentProvider and returns it shallow-frozen. */
export function defineAgentProvider(implementation) {
  captureAgentProvider(implementation)
  // A shallow freeze keeps class instances usable: private #fields are not properties.
  return Object.freeze(implementation)
}
