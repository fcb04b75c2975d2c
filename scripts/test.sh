#!/usr/bin/env bash
# The README's test command runs this: installs what the tests need, builds, and runs every test.
# Each script in scripts/test-setup.d/ installs or starts one thing (Docker engine, bubblewrap,
# Bazel, ...), idempotently, and may export variables for the tests through $KILN_TEST_ENV.
set -euo pipefail
cd "$(dirname "$0")/.."
export KILN_TEST_ENV="${KILN_TEST_ENV:-$PWD/.cache/test-env.sh}"
mkdir -p "$(dirname "$KILN_TEST_ENV")"
: >"$KILN_TEST_ENV"
for setup in scripts/test-setup.d/*.sh; do
  [ -e "$setup" ] || continue
  echo "== $setup"
  bash "$setup"
done
# shellcheck disable=SC1090
. "$KILN_TEST_ENV"
npm run build
npx vitest run "$@"
