// defineWorkspaceProvider (INVENTORY WS-4): the same name and acquire checks as the runtime
// `workspaceProvider` option (RT-1 TypeErrors), then a shallow freeze. No I/O.

import { captureWorkspaceProvider } from "../core/provider-shape.js"

/** Validates `implementation` as a WorkspaceProvider and shallow-freezes it. */
export function defineWorkspaceProvider(implementation) {
  captureWorkspaceProvider(implementation)
  // A shallow freeze keeps class instances usable: private #fields are not properties.
  return Object.freeze(implementation)
}
