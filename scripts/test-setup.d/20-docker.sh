#!/usr/bin/env bash
# Starts Kiln's private Docker engine and builds Kiln's base image (both idempotent, both cached
# under .cache: the engine's data in docker/, Debian's packages in base-image/), then exports
# KILN_DOCKER_HOST and KILN_BASE_IMAGE (kiln/base:<recipe hash>, see deploy/base-image) for the tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(bash scripts/docker/start-dockerd.sh)"
image="$(bash deploy/base-image/build.sh)"
if [ -n "${KILN_TEST_ENV:-}" ]; then
  {
    echo "export KILN_DOCKER_HOST=$DOCKER_HOST"
    echo "export KILN_BASE_IMAGE=$image"
  } >>"$KILN_TEST_ENV"
fi
echo "docker: engine at $DOCKER_HOST, base image $image"
