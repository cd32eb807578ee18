// Links this checkout's own `aml` command into node_modules/.bin, so `npx aml …` in a clone
// runs bin/aml.js at once. npx looks there only because the repository's manifest declares no
// `aml` bin (its `bin` is a bare path, named `sdk` by npm; the publish manifest names it `aml`,
// scripts/publish-manifest.js): for a checkout that declares one, npx installs the checkout into
// its cache first, which runs `prepare` (the release build). Run by `prepare`, after the build;
// __test__/npx-checkout.spec.ts checks the whole path.
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const binDir = join(root, "node_modules", ".bin")
const link = join(binDir, "aml")

// An installed package's prepare never runs: this is a contributor's checkout.
if (existsSync(join(root, "node_modules"))) {
  mkdirSync(binDir, { recursive: true })
  let present = false
  try {
    present = lstatSync(link).isSymbolicLink()
  } catch {
    present = false
  }
  if (present) rmSync(link)
  symlinkSync(join("..", "..", "bin", "aml.js"), link)
}
