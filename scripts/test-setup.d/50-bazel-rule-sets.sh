#!/usr/bin/env bash
# Installs Debian's packaged Bazel rule sets (bazel-skylib 1.0.3, platforms, rules_java, rules_cc,
# rules_proto) when missing: test/rule-sets/ loads and tests them as they ship, under
# /usr/share/bazel/tools/ and /usr/share/bazel/rules/ (scripts/rule-sets/ sets up their workspaces in
# temp dirs).
set -euo pipefail
. "$(dirname "$0")/../lib/apt-install.sh"
missing=()
for pair in tools/skylib:bazel-skylib tools/platforms:bazel-platforms rules/java:bazel-rules-java \
  rules/cc:bazel-rules-cc rules/proto:bazel-rules-proto; do
  [ -d "/usr/share/bazel/${pair%%:*}" ] || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "Bazel rule sets: /usr/share/bazel/tools, /usr/share/bazel/rules"
elif ! apt_install "${missing[*]}" "${missing[@]}"; then
  echo "${missing[*]} missing and cannot be installed here (needs root and apt); test/rule-sets/ will fail under CI" >&2
fi
# skylib's suite builds C++ (cc_binary in tests/native_binary and tests/run_binary), and so does
# test/e2e/cc-rules.test.ts: the C++ compiler too.
if command -v g++ >/dev/null 2>&1; then
  echo "c++ compiler: $(command -v g++)"
elif ! apt_install g++ g++; then
  echo "no C++ compiler and none can be installed here (needs root and apt); the C++ rule tests will fail under CI" >&2
fi
