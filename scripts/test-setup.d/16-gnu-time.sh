#!/usr/bin/env bash
# Installs GNU time when missing: the hostile-server build table (test/e2e/hostile-remote-table.test.ts)
# measures Kiln's peak resident memory with it (/usr/bin/time -f %M), which Node cannot read for a child.
set -euo pipefail
if [ -x /usr/bin/time ]; then
  echo "GNU time: /usr/bin/time"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing GNU time with apt-get (one time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends time
else
  echo "GNU time is missing and cannot be installed here (needs root and apt); the hostile-server build table will fail under CI" >&2
fi
