#!/usr/bin/env bash
# Installs the S3 test server (moto, from PyPI) into target/moto-venv once; the S3 tests
# start it as `moto_server -H 127.0.0.1 -p <port>`. Idempotent and safe to run concurrently.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="5.2.5"
venv="$root/target/moto-venv"
marker="$venv/.installed-moto-$version"
. "$root/scripts/install-once.sh"
install_once "$venv" "$marker"
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  rm -rf "$venv"
  # Debian ships ensurepip separately (python3-venv). Install it when we may.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    pyver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${pyver}-venv" >/dev/null \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  else
    echo "install-moto: 'python3 -m venv' failed; install the python3-venv package" >&2
    exit 1
  fi
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet "moto[server]==$version"
touch "$marker"
