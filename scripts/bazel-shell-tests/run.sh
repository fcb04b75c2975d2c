#!/usr/bin/env bash
# Runs Bazel's own shell integration tests (Debian's bazel-bootstrap-source, Bazel 4.2.3's
# src/test/shell/{integration,bazel}) with kiln as the `bazel` they call, unchanged: their own
# unittest.bash and testenv.sh drive them; this script only lays out the runfiles tree Bazel's test
# runner would give them (io_bazel/src/test/shell/..., io_bazel/src/bazel = kiln) and an rlocation.
#
#   scripts/bazel-shell-tests/run.sh integration/action_env_test.sh [more tests...]
#
# Each test script prints its cases' PASSED/FAILED lines; a summary line per script follows,
# and the exit code is the number of scripts with a failing case (capped at 100).
set -euo pipefail

SOURCE=${BAZEL_SOURCE:-/usr/src/bazel-bootstrap}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KILN=${KILN:-$(cd "$HERE/../.." && pwd)/bin/kiln}
if [[ ! -d $SOURCE/src/test/shell ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q bazel-bootstrap-source >/dev/null
  else
    echo "bazel-shell-tests: $SOURCE/src/test/shell is missing (apt-get install bazel-bootstrap-source)" >&2
    exit 2
  fi
fi

failed=0
for test in "$@"; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bazel-shell-test.XXXXXX")
  runfiles=$work/runfiles
  mkdir -p "$runfiles/io_bazel/src/test" "$work/tmp"
  # The shell test sources as they are (links into the package's tree, never written), and empty
  # stand-ins for the data files Bazel's build would have made for them (langtools.jar: Java only).
  mkdir -p "$runfiles/io_bazel/src/test/shell/bazel"
  for entry in "$SOURCE"/src/test/shell/*; do
    case $(basename "$entry") in bazel | bin) ;; *) ln -s "$entry" "$runfiles/io_bazel/src/test/shell/" ;; esac
  done
  # The `bazel` wrapper they put first on PATH: Debian ships it without its executable bit, which
  # Bazel's runfiles tree (an sh_binary's) would have.
  mkdir -p "$runfiles/io_bazel/src/test/shell/bin"
  for entry in "$SOURCE"/src/test/shell/bin/*; do install -m 0755 "$entry" "$runfiles/io_bazel/src/test/shell/bin/"; done
  for entry in "$SOURCE"/src/test/shell/bazel/*; do ln -s "$entry" "$runfiles/io_bazel/src/test/shell/bazel/"; done
  : >"$runfiles/io_bazel/src/test/shell/bazel/langtools.jar"
  # third_party/java/jdk/langtools: Debian's source drops the javac jar the tests link (Java only).
  langtools=$runfiles/io_bazel/third_party/java/jdk/langtools
  mkdir -p "$langtools"
  ln -s "$SOURCE/third_party/java/jdk/langtools/BUILD" "$langtools/BUILD"
  : >"$langtools/javac-9+181-r4173-1.jar"
  for top in tools WORKSPACE distdir.bzl examples; do
    [[ -e $SOURCE/$top ]] && ln -s "$SOURCE/$top" "$runfiles/io_bazel/$top"
  done
  ln -s "$KILN" "$runfiles/io_bazel/src/bazel"
  # The Bash runfiles library some of them load, Bazel's own (from the same source package).
  mkdir -p "$runfiles/bazel_tools"
  ln -s "$SOURCE/tools" "$runfiles/bazel_tools/tools"
  # What Bazel's test runner would give a sh_test: `rlocation` (a program on PATH; an exported
  # function upsets bash 5's unittest.bash traps), the TEST_* variables.
  mkdir -p "$work/bin"
  cat >"$work/bin/rlocation" <<RL
#!/bin/sh
echo "$runfiles/\$1"
RL
  chmod +x "$work/bin/rlocation"
  log=$work/output.log
  set +e
  (
    cd "$work"
    export PATH="$work/bin:$PATH"
    export TEST_SRCDIR=$runfiles TEST_TMPDIR=$work/tmp TEST_WORKSPACE=io_bazel \
      RUNFILES_DIR=$runfiles XML_OUTPUT_FILE=$work/test.xml TEST_UNDECLARED_OUTPUTS_DIR=$work/undeclared \
      KILN_SYSTEM_BAZELRC='' HOME=$work/home
    mkdir -p "$HOME" "$TEST_UNDECLARED_OUTPUTS_DIR"
    timeout "${KILN_SHELL_TEST_TIMEOUT:-900}" bash "$runfiles/io_bazel/src/test/shell/$test"
  ) >"$log" 2>&1
  code=$?
  set -e
  # unittest.bash's verdict lines, `PASSED: test_name` / `FAILED: test_name`, coloured.
  verdicts=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(PASSED|FAILED): ' || true)
  [[ -n $verdicts ]] && echo "$verdicts"
  passed=$(grep -c '^PASSED: ' <<<"$verdicts" || true)
  failures=$(grep -c '^FAILED: ' <<<"$verdicts" || true)
  echo "== $test: exit $code, $passed passed, $failures failed (log: $log)"
  if [[ $code != 0 ]]; then failed=$((failed + 1)); fi
done
exit $((failed > 100 ? 100 : failed))
