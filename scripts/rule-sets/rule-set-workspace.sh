#!/usr/bin/env bash
# Copies one of Debian's packaged rule sets (its tree under /usr/share/bazel, WORKSPACE included, as
# the package ships it) into DEST, a new or empty folder, writable, for `query //...` there.
#
#   scripts/rule-sets/rule-set-workspace.sh SRC DEST
set -euo pipefail
src=${1:?usage: rule-set-workspace.sh SRC DEST}
dest=${2:?usage: rule-set-workspace.sh SRC DEST}
if ! [ -f "$src/WORKSPACE" ]; then
  echo "rule-set-workspace: $src has no WORKSPACE; install the package (scripts/test-setup.d/50-bazel-rule-sets.sh)" >&2
  exit 1
fi
mkdir -p "$dest"
if [ -n "$(ls -A "$dest")" ]; then
  echo "rule-set-workspace: $dest is not empty" >&2
  exit 1
fi
cp -R "$src/." "$dest/"
chmod -R u+w "$dest"
