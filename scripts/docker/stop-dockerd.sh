#!/usr/bin/env bash
# Stops the private Docker engine that start-dockerd.sh started. The data root (images, such as
# Kiln's base image) is kept; delete $KILN_DOCKER_DIR/data to drop it.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="${KILN_DOCKER_DIR:-$REPO/.cache/docker}"
PIDFILE="$DIR/dockerd.pid"
if ! [ -f "$PIDFILE" ]; then
  echo "stop-dockerd: no engine running from $DIR" >&2
  exit 0
fi
pid="$(cat "$PIDFILE")"
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  # dockerd stops its containers first; give it up to 20 s, then force.
  for _ in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stop-dockerd: dockerd (pid $pid) did not stop; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
fi
rm -f "$PIDFILE" "$DIR/docker.sock" "/run/kiln-docker-$(printf '%s' "$DIR" | sha256sum | cut -c1-12)/docker.sock"
echo "stop-dockerd: stopped" >&2
