#!/usr/bin/env bash
# Sets up bazel-skylib 1.0.3's own test workspace from Debian's bazel-skylib package in DEST (a new
# or empty folder), without the downloads its own WORKSPACE makes: a copy of the package's tree with
# a minimal WORKSPACE (the repository's name and its bazel_skylib_workspace() call, as skylib's
# README tells its users) and a .bazelignore for distribution/ and gazelle/, whose BUILD files load
# @rules_pkg and @bazel_gazelle, which would be downloaded.
#
#   scripts/rule-sets/skylib-suite.sh DEST
#
# Then, in DEST: `query //...`, `build --keep_going -- //... -//:distribution` (its filegroup names
# CODEOWNERS and CONTRIBUTORS, which the package does not ship), `test //tests/...`.
set -euo pipefail
src=${SKYLIB_SRC:-/usr/share/bazel/tools/skylib}
dest=${1:?usage: skylib-suite.sh DEST}
if ! [ -f "$src/lib/unittest.bzl" ]; then
  echo "skylib-suite: $src has no lib/unittest.bzl; install Debian's bazel-skylib (scripts/test-setup.d/50-bazel-rule-sets.sh)" >&2
  exit 1
fi
mkdir -p "$dest"
if [ -n "$(ls -A "$dest")" ]; then
  echo "skylib-suite: $dest is not empty" >&2
  exit 1
fi
cp -R "$src/." "$dest/"
# The package installs its files read-only for users; the tests' builds write convenience symlinks.
chmod -R u+w "$dest"
cat >"$dest/WORKSPACE" <<'WS'
workspace(name = "bazel_skylib")

load("//:workspace.bzl", "bazel_skylib_workspace")

bazel_skylib_workspace()
WS
printf 'distribution\ngazelle\n' >"$dest/.bazelignore"
