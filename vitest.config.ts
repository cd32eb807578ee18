import { fileURLToPath } from "node:url"

import { defineConfig } from "vitest/config"

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "@aml-jsx/sdk" },
  resolve: {
    alias: [
      { find: /^@aml-jsx\/sdk\/jsx-runtime$/, replacement: root("./jsx-runtime/index.js") },
      { find: /^@aml-jsx\/sdk\/jsx-dev-runtime$/, replacement: root("./jsx-dev-runtime/index.js") },
      { find: /^@aml-jsx\/sdk\/testing$/, replacement: root("./testing/index.js") },
      { find: /^@aml-jsx\/sdk$/, replacement: root("./index.js") },
    ],
  },
  test: {
    include: ["__test__/**/*.spec.{ts,tsx}"],
    // The package test packs and installs the release build: `npm run test:package`.
    exclude: ["**/node_modules/**", "__test__/package/**"],
    // Weak threadsafe functions and AsyncLocalStorage misbehave in worker threads; forks
    // give each file a real process.
    pool: "forks",
    testTimeout: 20_000,
    // On Node < 22 the AWS SDK warns once per process that its releases after January 2027
    // will need Node 22 (NodeVersionSupportWarning). It concerns the SDK's future versions,
    // not these tests, and once per S3 spec file it made a green run look broken. Spawned
    // workers (Restate) inherit it.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    // Stops the Docker daemon the Docker Sandbox specs started (scripts/docker-daemon.sh).
    globalSetup: ["__test__/support/docker-daemon-teardown.ts"],
  },
})
