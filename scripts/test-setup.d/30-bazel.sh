#!/usr/bin/env bash
# Installs Bazel 2.1.0 (the interop client of test/interop/) from the npm registry package
# @bazel/bazel-linux_x64@2.1.0 into .cache/bazel/, once, and exports KILN_BAZEL for the tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=2.1.0
DEST="$PWD/.cache/bazel/$VERSION"
BIN="$DEST/bazel"
if [ ! -x "$BIN" ]; then
  echo "installing Bazel $VERSION into $DEST"
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  (cd "$WORK" && npm pack --silent "@bazel/bazel-linux_x64@$VERSION" >/dev/null)
  tar -xzf "$WORK"/bazel-bazel-linux_x64-"$VERSION".tgz -C "$WORK"
  mkdir -p "$DEST"
  # The package holds one executable: the self-extracting Bazel binary.
  cp "$WORK/package/bazel-$VERSION-linux-x86_64" "$BIN.tmp" 2>/dev/null || cp "$(find "$WORK/package" -maxdepth 1 -type f -name 'bazel*' ! -name '*.json' | head -n 1)" "$BIN.tmp"
  chmod +x "$BIN.tmp"
  mv "$BIN.tmp" "$BIN"
fi
if [ -n "${KILN_TEST_ENV:-}" ]; then
  echo "export KILN_BAZEL=$BIN" >>"$KILN_TEST_ENV"
fi
echo "Bazel $VERSION: $BIN"
