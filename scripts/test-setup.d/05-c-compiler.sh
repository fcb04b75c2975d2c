#!/usr/bin/env bash
# Installs a C compiler when missing: `npm run build` compiles Kiln's native process starter and sandbox
# (src/core/sandbox/native/) with it, statically where libc6-dev allows, and the tests check both.
set -euo pipefail
if command -v cc >/dev/null 2>&1; then
  echo "c compiler: $(command -v cc)"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing gcc with apt-get (one time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends gcc libc6-dev
else
  echo "no C compiler and none can be installed here (needs root and apt); the native starter tests will fail under CI" >&2
fi
