#!/usr/bin/env bash
# Builds Kiln's role images (kiln/scheduler, kiln/storage, kiln/executor) on the engine DOCKER_HOST
# names, from the local base image and this checkout's build, with no registry and no network:
#
#   npm run build                                   # dist/
#   deploy/docker/build.sh [ROLE...]                # default: scheduler storage executor
#
# Each image is tagged kiln/<role>:<version of package.json> and kiln/<role>:latest; the names go to
# stdout, progress to stderr. The context is staged in a temporary directory:
#   rootfs/opt/kiln/{bin,dist,package.json,node_modules}  Kiln, with only its production dependencies
#   rootfs/opt/kiln/bin/node                              the node that runs this script (Kiln needs 20.19+,
#                                                         newer than Debian's), beside bin/kiln on PATH
#   rootfs/opt/kiln/host-libs/                            the libraries node links beyond glibc
# KILN_BASE_IMAGE picks the base image; by default deploy/base-image/build.sh builds or finds it.
# KILN_IMAGE_PREFIX replaces `kiln` in the names (a test builds under a name of its own and removes it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
log() { echo "docker-images: $*" >&2; }
ROLES=("$@")
[ ${#ROLES[@]} -gt 0 ] || ROLES=(scheduler storage executor)
for role in "${ROLES[@]}"; do
  case $role in scheduler | storage | executor) ;; *) log "unknown role '$role' (scheduler, storage or executor)"; exit 2 ;; esac
done
[ -f "$ROOT/dist/bundle/kiln.js" ] || { log "no dist/bundle/kiln.js: run 'npm run build' first"; exit 1; }
BASE="${KILN_BASE_IMAGE:-$("$ROOT/deploy/base-image/build.sh")}"
PREFIX="${KILN_IMAGE_PREFIX:-kiln}"
VERSION="$(node -p "require('$ROOT/package.json').version")"

CONTEXT="$(mktemp -d)"
trap 'rm -rf "$CONTEXT"' EXIT
KILN="$CONTEXT/rootfs/opt/kiln"
mkdir -p "$KILN/node_modules" "$KILN/host-libs"
cp -a "$ROOT/bin" "$ROOT/dist" "$ROOT/package.json" "$KILN/"
# Production dependencies only, as npm resolves them for this checkout (no registry is asked).
(cd "$ROOT" && npm ls --omit=dev --all --parseable 2>/dev/null) | while read -r dir; do
  [ "$dir" = "$ROOT" ] && continue
  rel="${dir#"$ROOT"/}"
  # A package nested in another is copied with it.
  case $rel in */node_modules/*) [ -d "$CONTEXT/rootfs/opt/kiln/$rel" ] && continue ;; esac
  mkdir -p "$KILN/$(dirname "$rel")"
  cp -a "$dir" "$KILN/$rel"
done
NODE="$(readlink -f "$(command -v node)")"
cp -p "$NODE" "$KILN/bin/node"
ldd "$NODE" | awk '/=> \// { print $3 }' | while read -r lib; do
  case ${lib##*/} in libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) continue ;; esac
  cp -pL "$lib" "$KILN/host-libs/"
done
cp "$HERE/Dockerfile" "$CONTEXT/Dockerfile"

for role in "${ROLES[@]}"; do
  started=$(date +%s%N)
  docker build -q --force-rm --network none --build-arg "BASE_IMAGE=$BASE" --target "$role" \
    --label "kiln.version=$VERSION" --label "kiln.base=$BASE" \
    -t "$PREFIX/$role:$VERSION" -t "$PREFIX/$role:latest" "$CONTEXT" >/dev/null
  log "built $PREFIX/$role:$VERSION from $BASE in $(( ($(date +%s%N) - started) / 1000000 )) ms"
  echo "$PREFIX/$role:$VERSION"
done
