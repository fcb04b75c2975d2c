#!/usr/bin/env bash
# Installs openssl when missing: the TLS tests (client, cache server, secured cluster) issue their
# certificates with it, since Node's crypto cannot make X.509 certificates.
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
if command -v openssl >/dev/null 2>&1; then
  echo "openssl: $(command -v openssl)"
elif ! apt_install openssl openssl; then
  echo "openssl is missing and cannot be installed here (needs root and apt); the TLS tests will fail under CI" >&2
fi
