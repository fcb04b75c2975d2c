#!/usr/bin/env bash
# Installs Debian's chromium when missing: the web UI's browser tests (test/e2e/web-ui*.test.ts) drive
# it headless through playwright-core (launched at /usr/bin/chromium, so Playwright downloads no browser).
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
if [ -x /usr/bin/chromium ]; then
  echo "chromium: /usr/bin/chromium"
elif ! apt_install chromium chromium; then
  echo "chromium is missing and cannot be installed here (needs root and apt); the web UI's browser tests will fail under CI" >&2
fi
