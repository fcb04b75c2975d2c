#!/usr/bin/env bash
# Records Bazel 4.2.3's --announce_rc lines for the workspace here (test/cli/announce-rc.test.ts
# compares Kiln's against them). Needs ../shared/reference-bazel/bazel4 beside the repository, or BAZEL4=path (it installs Bazel once).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bazel="${BAZEL4:-$here/../../../../shared/reference-bazel/bazel4}"  # the repository beside ../shared; BAZEL4 names another
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/workspace" "$work/ws"
cp "$here/user.rc" "$work/user.rc"
cd "$work/ws"
# Debian's Bazel unpacks into /usr/share/bazel; its system rc says so, and the test reads no system rc.
startup=(--nosystem_rc --nohome_rc --install_base=/usr/share/bazel --trust_install_base "--bazelrc=$work/user.rc")
for cmd in build test; do
  echo "### $cmd --announce_rc --config=ci"
  KILN_REF_BAZEL_ROOT="$work/root" "$bazel" "${startup[@]}" "$cmd" --nobuild --announce_rc --config=ci //pkg:a 2>&1 \
    | awk '/^INFO: (Reading rc options|Reading .startup. options|Found applicable config)/ {keep=1; print; next} keep && /^  / {print; next} {keep=0}' \
    | sed "s#$work/ws#<WORKSPACE>#g; s#$work#<DIR>#g" || true
done
KILN_REF_BAZEL_ROOT="$work/root" "$bazel" "${startup[@]}" shutdown >/dev/null 2>&1 || true
