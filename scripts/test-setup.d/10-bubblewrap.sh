#!/usr/bin/env bash
# Installs bubblewrap (the namespace sandbox of src/core/sandbox and the `sandboxed` strategy) when
# missing, checks that it can create namespaces on this machine, and exports KILN_BWRAP for the tests.
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
if ! command -v bwrap >/dev/null 2>&1 && ! apt_install bubblewrap bubblewrap; then
  echo "bubblewrap is not installed and cannot be installed here (needs root and apt); sandbox tests will skip" >&2
  exit 0
fi
BWRAP="$(command -v bwrap)"
if err="$("$BWRAP" --unshare-all --die-with-parent --ro-bind / / true 2>&1)"; then
  [ -n "${KILN_TEST_ENV:-}" ] && echo "export KILN_BWRAP=$BWRAP" >>"$KILN_TEST_ENV"
  echo "bubblewrap: $BWRAP creates namespaces here"
else
  # Not fatal: the runner falls back and the sandbox tests say why they skip.
  echo "bubblewrap: $BWRAP cannot create namespaces here: $err" >&2
fi
