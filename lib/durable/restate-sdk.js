// Loads @restatedev/restate-sdk, the optional peer of @aml-jsx/sdk/restate, on first use, so
// the rest of the package never needs it. The SDK needs Node 22 or newer (it calls
// Promise.withResolvers unguarded: on Node 20 every invocation fails and is retried forever),
// so the Node version is checked first, with a message that says so.

let loaded

export const RESTATE_PACKAGE = "@restatedev/restate-sdk"

/** Throws unless this Node can run the Restate SDK. */
export function checkNode(versions = process.versions, hasResolvers = typeof Promise.withResolvers === "function") {
  const major = Number(versions.node.split(".")[0])
  if (major < 22 || !hasResolvers) {
    throw new Error(`@aml-jsx/sdk/restate needs Node.js 22 or newer (${RESTATE_PACKAGE} uses Promise.withResolvers); this is Node.js ${versions.node}`)
  }
}

/** The SDK module; the error names the package to install when it is missing. */
export async function restateSdk() {
  if (loaded !== undefined) return loaded
  checkNode()
  loaded = await importPeer(RESTATE_PACKAGE)
  return loaded
}

/** Imports the optional peer `specifier`, or throws the error that says how to install it. */
export async function importPeer(specifier) {
  try {
    return await import(specifier)
  } catch (error) {
    if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(specifier)) {
      throw new Error(`@aml-jsx/sdk/restate needs the optional peer dependency ${specifier}: npm install ${specifier}`, { cause: error })
    }
    throw error
  }
}
