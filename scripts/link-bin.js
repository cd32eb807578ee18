// Links this checkout's own `aml` command into node_modules/.bin, so `npx aml …` in a clone
// runs bin/aml.js at once. Without the link npx installs the checkout into its cache first,
// which runs `prepare` (the release build) again. Run by `prepare`, after the build.
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
