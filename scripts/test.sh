#!/usr/bin/env bash
# The README's test command runs this: installs what the tests need, builds, and runs every test.
# Each script in scripts/test-setup.d/ installs or starts one thing (Docker engine, bubblewrap,
# Bazel, ...), idempotently, and may export variables for the tests through $KILN_TEST_ENV.
set -euo pipefail
cd "$(dirname "$0")/.."
export KILN_TEST_ENV="${KILN_TEST_ENV:-$PWD/.cache/test-env.sh}"
mkdir -p "$(dirname "$KILN_TEST_ENV")"
: >"$KILN_TEST_ENV"

# An engine this run starts is stopped when it ends (its images stay cached); one that was already
# running, a developer's, is left alone.
dockerd_pidfile="${KILN_DOCKER_DIR:-$PWD/.cache/docker}/dockerd.pid"
engine_was_running=false
if [ -f "$dockerd_pidfile" ] && kill -0 "$(cat "$dockerd_pidfile")" 2>/dev/null; then engine_was_running=true; fi
stop_engine() {
  if [ "$engine_was_running" = false ] && [ -f "$dockerd_pidfile" ]; then
    bash scripts/docker/stop-dockerd.sh || true
  fi
}
trap stop_engine EXIT

for setup in scripts/test-setup.d/*.sh; do
  [ -e "$setup" ] || continue
  echo "== $setup"
  bash "$setup"
done
# shellcheck disable=SC1090
. "$KILN_TEST_ENV"
# Formatting and lint (Biome, biome.json) first: the cheapest check fails first.
npm run lint
npm run build
# Type-checks test/ too (tsconfig.test.json includes everything tsconfig.json builds, and test/).
npm run typecheck
npx vitest run "$@"
