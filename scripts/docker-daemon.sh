#!/usr/bin/env bash
# The Docker daemon the Docker Sandbox tests run against (docs/DOCKER-SANDBOX.md).
#   docker-daemon.sh start   install docker.io + busybox-static if missing (root + apt-get),
#                            start dockerd in the background (log and PID file under
#                            target/docker/), wait until `docker info` answers, build the test
#                            image aml-test-busybox:1 from busybox-static with `docker import`.
#   docker-daemon.sh stop    stop the daemon this script started (by its PID file only).
# A daemon that already answers is used as it is and never stopped by this script.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/target/docker"
pidfile="$state/dockerd.pid"
log="$state/dockerd.log"
image="aml-test-busybox:1"
mkdir -p "$state"

install() {
  if command -v dockerd >/dev/null 2>&1 && [ -x /bin/busybox ]; then return 0; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "docker-daemon: install docker.io and busybox-static (needs root and apt-get)" >&2
    exit 1
  fi
  exec 9>"$state/install.lock"
  flock 9
  if ! command -v dockerd >/dev/null 2>&1 || [ ! -x /bin/busybox ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io busybox-static >/dev/null
  fi
}

answers() { docker info >/dev/null 2>&1; }

build_image() {
  docker image inspect "$image" >/dev/null 2>&1 && return 0
  local rootfs
  rootfs="$(mktemp -d)"
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/workspace" "$rootfs/etc"
  cp /bin/busybox "$rootfs/bin/busybox"
  for tool in $("$rootfs/bin/busybox" --list); do
    [ "$tool" = busybox ] || ln -s busybox "$rootfs/bin/$tool"
  done
  chmod 1777 "$rootfs/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  tar -C "$rootfs" -c . | docker import --change 'ENV PATH=/bin' - "$image" >/dev/null
  rm -rf "$rootfs"
}

start() {
  # A daemon this user may use already answers: nothing to install or start.
  if answers; then
    build_image
    return 0
  fi
  install
  if ! answers; then
    exec 8>"$state/start.lock"
    flock 8
    if ! answers; then
      nohup dockerd >"$log" 2>&1 &
      echo $! >"$pidfile"
      for _ in $(seq 1 300); do
        answers && break
        kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$log" >&2; echo "docker-daemon: dockerd exited" >&2; exit 1; }
        sleep 0.1
      done
      answers || { echo "docker-daemon: dockerd did not answer; see $log" >&2; exit 1; }
    fi
  fi
  build_image
}

stop() {
  [ -f "$pidfile" ] || return 0
  local pid
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: docker-daemon.sh start|stop" >&2; exit 2 ;;
esac
