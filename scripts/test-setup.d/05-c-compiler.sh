#!/usr/bin/env bash
# Installs a C compiler when missing: `npm run build` compiles Kiln's native process starter and sandbox
# (src/core/sandbox/native/) with it, statically where libc6-dev allows, and the tests check both.
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
if command -v cc >/dev/null 2>&1; then
  echo "c compiler: $(command -v cc)"
elif ! apt_install gcc gcc libc6-dev; then
  echo "no C compiler and none can be installed here (needs root and apt); the native starter tests will fail under CI" >&2
fi
