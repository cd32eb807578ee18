// Loads the optional peer dependency `@opentelemetry/api` on first use of the exporter, never
// at import time: an application that does not use createOpenTelemetryTracer() loads nothing.
//
// Resolution is synchronous (createRequire), so the factory returns the listener directly
// and works in `new AmlRuntime({ trace: createOpenTelemetryTracer() })`. The package is
// resolved from the SDK's own location first (where a package manager puts a peer
// dependency) and then from the application's working directory. Two physical copies of
// the API share one global tracer provider and context manager (the API keeps them on a
// versioned global), so whichever copy resolves sees the application's setup.

import { createRequire } from "node:module"
import { join } from "node:path"

const PACKAGE = "@opentelemetry/api"

let loaded

function tryRequire(base) {
  try {
    return { api: createRequire(base)(PACKAGE) }
  } catch (error) {
    return { error }
  }
}

/** The `@opentelemetry/api` module; throws a clear Error naming the package when it is missing. */
export function loadOpenTelemetryApi() {
  if (loaded !== undefined) return loaded
  const own = tryRequire(import.meta.url)
  const found = own.api === undefined ? tryRequire(join(process.cwd(), "package.json")) : own
  if (found.api === undefined) {
    throw new Error(
      `createOpenTelemetryTracer requires the optional peer dependency "${PACKAGE}"; install it with \`npm install ${PACKAGE}\``,
      { cause: own.error },
    )
  }
  loaded = found.api
  return loaded
}

/** The SDK's own version, for the default tracer's instrumentation scope. */
export function sdkVersion() {
  return createRequire(import.meta.url)("../../package.json").version
}
