#!/usr/bin/env bash
# Installs what `npm run pack:release -- --all` and the arm64 test group need on a Debian x64
# machine, from the package registries only (docs/PACKAGING.md, "Every Unix target"):
#   rustup targets  the five non-host Unix targets' standard libraries, and Windows' for the
#                   type check of scripts/check-windows.js
#   PyPI            ziglang (zig as the cross linker for musl and Darwin) and cargo-zigbuild
#   Debian          gcc-aarch64-linux-gnu (arm64 glibc C compiler and linker), musl-tools,
#                   qemu-user-static + binfmt-support (running arm64 binaries, test group arm64)
# Idempotent; needs root for apt-get (pass --no-apt to skip that part).
set -euo pipefail

# x86_64-pc-windows-gnu: only type-checked (scripts/check-windows.js), never built.
targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-gnu aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu)

if [[ "${1:-}" != "--no-apt" ]]; then
  missing=()
  for package in gcc-aarch64-linux-gnu libc6-dev-arm64-cross musl-tools qemu-user-static binfmt-support; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

rustup target add "${targets[@]}"

# zig's Python wheel runs as `python3 -m ziglang`; cargo-zigbuild finds it that way when no
# `zig` is on PATH. Both wheels are self-contained binaries.
python3 -m pip install --quiet --disable-pip-version-check 'ziglang==0.14.1' 'cargo-zigbuild==0.24.1'
python3 -m ziglang version
cargo-zigbuild --version
