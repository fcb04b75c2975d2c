#!/usr/bin/env bash
# Installs GNU time when missing: the hostile-server build table (test/e2e/hostile-remote-table.test.ts)
# measures Kiln's peak resident memory with it (/usr/bin/time -f %M), which Node cannot read for a child.
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
if [ -x /usr/bin/time ]; then
  echo "GNU time: /usr/bin/time"
elif ! apt_install "GNU time" time; then
  echo "GNU time is missing and cannot be installed here (needs root and apt); the hostile-server build table will fail under CI" >&2
fi
