#!/usr/bin/env bash
# Installs iproute2 when missing: the multi-host test (test/e2e/multihost.test.ts) makes its hosts from
# network namespaces and veth links with `ip netns` and `ip link`.
set -euo pipefail
if command -v ip >/dev/null 2>&1; then
  echo "iproute2: $(command -v ip)"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing iproute2 with apt-get (one time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends iproute2
else
  echo "iproute2 is missing and cannot be installed here (needs root and apt); the multi-host test will fail under CI" >&2
fi
