#!/usr/bin/env bash
# Installs openssl when missing: the TLS tests (client, cache server, secured cluster) issue their
# certificates with it, since Node's crypto cannot make X.509 certificates.
set -euo pipefail
if command -v openssl >/dev/null 2>&1; then
  echo "openssl: $(command -v openssl)"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing openssl with apt-get (one time)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openssl
else
  echo "openssl is missing and cannot be installed here (needs root and apt); the TLS tests will fail under CI" >&2
fi
