// The package test (`npm run test:package`, last step of `npm test`): the global set-up packs
// the release addon and the root once (__test__/package/global-setup.ts); the specs install
// the tarballs into fresh projects and run them there. Serial by nature, so it runs on its own
// after the main suite instead of competing with it for the two CI cores, one file at a time.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["__test__/package/**/*.spec.ts"],
    globalSetup: ["__test__/package/global-setup.ts"],
    fileParallelism: false,
    pool: "forks",
    // Hang guards only: npm installs on a loaded 2-core machine.
    hookTimeout: 1_200_000,
    testTimeout: 300_000,
  },
})
