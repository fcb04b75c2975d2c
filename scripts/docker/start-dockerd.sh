#!/usr/bin/env bash
# Starts a private Docker engine for Kiln (tests, `kiln cluster up --runner docker`), idempotently.
#
# The engine listens only on a private unix socket, keeps its images in a persistent data root
# under the repository's .cache/ (so Kiln's base image survives between runs), and has no
# networking at all: no bridge, no iptables rules. Containers must use NetworkMode "none".
#
# Prints `export DOCKER_HOST=unix://...` as its last line of stdout; eval it or source it.
# Environment: KILN_DOCKER_DIR (default <repo>/.cache/docker) holds socket, pid file, data and log.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="${KILN_DOCKER_DIR:-$REPO/.cache/docker}"
. "$REPO/scripts/lib/apt-install.sh"
SOCKET="$DIR/docker.sock"
# A unix socket path must fit in 108 bytes; a deep checkout gets a short one under /run instead.
if [ "${#SOCKET}" -gt 100 ]; then
  SOCKET="/run/kiln-docker-$(printf '%s' "$DIR" | sha256sum | cut -c1-12)/docker.sock"
  mkdir -p "$(dirname "$SOCKET")"
fi
PIDFILE="$DIR/dockerd.pid"
LOG="$DIR/dockerd.log"
export DOCKER_HOST="unix://$SOCKET"

log() { echo "start-dockerd: $*" >&2; }

engine_answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if [ -S "$SOCKET" ] && engine_answers; then
  log "engine already running on $SOCKET"
  echo "export DOCKER_HOST=$DOCKER_HOST"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  # --no-install-recommends (apt_install) keeps it to the engine itself; the image build needs nothing more.
  if ! apt_install docker.io docker.io; then
    log "dockerd is not installed; install Debian's docker.io package (needs root and apt)"
    exit 1
  fi
  # The package may try to start a system-wide engine; Kiln uses its own private one.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
    log "note: a system docker service is also running; Kiln ignores it"
  fi
fi

# A stale pid file from a killed engine would make dockerd refuse to start.
if [ -f "$PIDFILE" ]; then
  old="$(cat "$PIDFILE" 2>/dev/null || true)"
  if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
    log "dockerd (pid $old) is running but does not answer yet; waiting for it"
  else
    rm -f "$PIDFILE" "$SOCKET"
  fi
fi

mkdir -p "$DIR/data" "$DIR/exec"
if ! [ -f "$PIDFILE" ]; then
  log "starting dockerd on $SOCKET (data root $DIR/data)"
  # setsid: the engine must outlive the shell that started it (test scripts, CI steps).
  setsid dockerd \
    --host "$DOCKER_HOST" \
    --data-root "$DIR/data" \
    --exec-root "$DIR/exec" \
    --pidfile "$PIDFILE" \
    --bridge=none \
    --iptables=false \
    --ip6tables=false \
    --ip-forward=false \
    --ip-masq=false \
    --userland-proxy=false \
    >"$LOG" 2>&1 </dev/null &
fi

# Bounded wait: 60 polls of 0.5 s.
for _ in $(seq 1 60); do
  if engine_answers; then
    log "engine $(docker version --format '{{.Server.Version}}') is up"
    echo "export DOCKER_HOST=$DOCKER_HOST"
    exit 0
  fi
  if [ -f "$PIDFILE" ] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then break; fi
  sleep 0.5
done
log "dockerd did not answer on $SOCKET; last lines of $LOG:"
tail -n 20 "$LOG" >&2 || true
exit 1
