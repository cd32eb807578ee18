// The package test (`npm run test:package`, last step of `npm test`): one spec that builds the
// release addon, packs, installs into a fresh project and runs it there. Serial by nature, so
// it runs on its own after the main suite instead of competing with it for the two CI cores.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["__test__/package/**/*.spec.ts"],
    pool: "forks",
    // Hang guards only: the release build alone takes minutes on a loaded 2-core machine.
    hookTimeout: 1_200_000,
    testTimeout: 300_000,
  },
})
