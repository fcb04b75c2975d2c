/**
 * The command every test action runs (Bazel's test-setup.sh and generate-xml.sh in one), given as
 * `/bin/bash -c TEST_SETUP_SCRIPT kiln-test-setup <log dir> <timeout seconds> <n> [n run_under words...] [test args...]`
 * with the environment of the test. Everything machine-specific (absolute paths, TMPDIR) is derived
 * here at run time from the working directory, the execroot, so the action's key is the same on
 * every machine and in every strategy.
 *
 * It writes in the log directory: `test.log` (Bazel's header, then the test's stdout and stderr, which
 * also go to the named pipe in KILN_LIVE_OUTPUT as they come when Kiln asks for live output),
 * `test.xml` (the test's own at XML_OUTPUT_FILE, else generated from the exit code and the log),
 * `test.outputs/outputs.zip` (the files the test left in TEST_UNDECLARED_OUTPUTS_DIR, zipped as Bazel
 * does; an empty archive when there are none) and `test.status` (`exit_code`, `timed_out`,
 * `duration_ms`: what the summary reports, kept with a cached result). The timeout is enforced by
 * coreutils' `timeout`, which leads the test's process group and signals all of it: SIGTERM, then
 * SIGKILL 15 seconds later (Bazel's --local_termination_grace_seconds); whatever is left in the group
 * when the test ends is killed. (A process that leaves the group with setsid escapes this in the
 * local strategy; a sandboxed test's whole pid namespace ends with it.) The script exits 0 exactly
 * when the test passed.
 */
// Written with `$\{` where bash has `${` (a template literal would interpolate it); replaced below.
export const TEST_SETUP_SCRIPT = String.raw`set -u
logs=$1; timeout_s=$2; under_n=$3; shift 3
# --run_under: the command (and its options) the test binary runs under.
run_under=("$\{@:1:under_n}"); shift "$under_n"
root=$PWD
dir="$root/$logs"
log="$dir/test.log"; status="$dir/test.status"
export RUNFILES_DIR="$root/$KILN_RUNFILES_DIR"; unset KILN_RUNFILES_DIR
export TEST_SRCDIR="$RUNFILES_DIR"
export XML_OUTPUT_FILE="$dir/test.xml"
export TEST_UNDECLARED_OUTPUTS_DIR="$dir/test.outputs"
export TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR="$dir/test.outputs_manifest"
export TEST_PREMATURE_EXIT_FILE="$dir/test.exited_prematurely"
export TEST_INFRASTRUCTURE_FAILURE_FILE="$dir/test.infrastructure_failure"
export TEST_WARNINGS_OUTPUT_FILE="$dir/test.warnings"
export TEST_UNUSED_RUNFILES_LOG_FILE="$dir/test.unused_runfiles_log"
export TEST_LOGSPLITTER_OUTPUT_FILE="$dir/test.raw_splitlogs/test.splitlogs"
if [ -n "$\{TEST_TOTAL_SHARDS-}" ]; then export TEST_SHARD_STATUS_FILE="$dir/test.shard"; fi
# TMPDIR is private to the action here; a remote executor may not set it (nor give a private /tmp),
# so there the test's temporary directory is in its own working directory, as Bazel's _tmp.
scratch="$\{TMPDIR:-$root/_tmp}"
export TEST_TMPDIR="$scratch/kiln-test-tmp"
export HOME="$TEST_TMPDIR" GTEST_TMP_DIR="$TEST_TMPDIR"
export JAVA_RUNFILES="$RUNFILES_DIR" PYTHON_RUNFILES="$RUNFILES_DIR" RUN_UNDER_RUNFILES=1
# Every process started here costs a test about as much as a trivial test itself, so the script uses
# bash's builtins where it can: rm only for what an earlier run left (never, in a fresh sandbox), one mkdir.
shopt -s nullglob dotglob
stale=()
for p in "$TEST_UNDECLARED_OUTPUTS_DIR" "$TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR" "$TEST_TMPDIR" "$dir/test.raw_splitlogs"; do
  if [ -d "$p" ] && [ ! -L "$p" ]; then entries=("$p"/*); [ $\{#entries[@]} -eq 0 ] || stale+=("$p")
  elif [ -e "$p" ] || [ -L "$p" ]; then stale+=("$p"); fi
done
for p in "$XML_OUTPUT_FILE" "$TEST_PREMATURE_EXIT_FILE" "$TEST_INFRASTRUCTURE_FAILURE_FILE" "$TEST_WARNINGS_OUTPUT_FILE" "$TEST_UNUSED_RUNFILES_LOG_FILE" "$dir/test.shard"; do
  if [ -e "$p" ] || [ -L "$p" ]; then stale+=("$p"); fi
done
shopt -u nullglob dotglob
if [ $\{#stale[@]} -gt 0 ]; then rm -rf "$\{stale[@]}"; fi
mkdir -p "$TEST_UNDECLARED_OUTPUTS_DIR" "$TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR" "$TEST_TMPDIR" "$dir/test.raw_splitlogs" || exit 1
{
  echo 'exec $\{PAGER:-/usr/bin/less} "$0" || exit 1'
  echo "Executing tests from $TEST_TARGET"
  echo '-----------------------------------------------------------------------------'
} > "$log"
cd "$RUNFILES_DIR/$TEST_WORKSPACE" || { echo "kiln: no runfiles directory $RUNFILES_DIR/$TEST_WORKSPACE" >> "$log"; exit 1; }
program="$RUNFILES_DIR/$TEST_WORKSPACE/$TEST_BINARY"
# --test_output=streamed: Kiln reads the named pipe in KILN_LIVE_OUTPUT, and tee copies the test's
# output there as it comes as well as into the log. The test itself never sees the variable.
live=$\{KILN_LIVE_OUTPUT-}; unset KILN_LIVE_OUTPUT
copier=
if [ -n "$live" ]; then exec 3> >(exec tee -a "$log" > "$live"); copier=$!; else exec 3>> "$log"; fi
# Sets ms to the time in milliseconds: bash's own clock (5.0+, no process), else date's.
now_ms() { if [ -n "$\{EPOCHREALTIME-}" ]; then local t=$\{EPOCHREALTIME/[.,]/}; ms=$((10#$t / 1000)); else ms=$(date +%s%3N); fi; }
# Prints file $1 as CDATA content: without the control characters XML forbids, "]]>" split. A short
# log (the usual case) by builtins; a longer one by tr and sed.
xml_character_data() {
  local LC_ALL=C text
  read -r -N 65537 text < "$1"
  if [ $\{#text} -gt 65536 ]; then
    tr -d '\000-\010\013\014\016-\037' < "$1" | sed 's|]]>|]]>]]<![CDATA[>|g'
  else
    # read drops NUL bytes, as tr -d does.
    text=$\{text//[$'\001'-$'\010'$'\013'$'\014'$'\016'-$'\037']/}
    printf '%s' "$\{text//']]>'/']]>]]<![CDATA[>'}"
  fi
}
now_ms; start=$ms
if command -v timeout > /dev/null; then
  # timeout leads a process group of its own: the test and everything it starts.
  timeout -k 15 "$timeout_s" "$\{run_under[@]}" "$program" "$@" >&3 2>&1 < /dev/null &
  group=$!
  exec 3>&-
  wait "$group"
  code=$?
  # Whatever the test left running in its group goes with it, as Bazel ends a test's process tree.
  kill -KILL -- "-$group" 2> /dev/null
else
  "$\{run_under[@]}" "$program" "$@" >&3 2>&1 < /dev/null
  code=$?
  exec 3>&-
fi
# The log is whole once the copier has written all the test wrote.
if [ -n "$copier" ]; then wait "$copier"; fi
now_ms; end=$ms
duration_ms=$((end - start))
timed_out=0
if { [ "$code" = 124 ] || [ "$code" = 137 ]; } && [ "$duration_ms" -ge $((timeout_s * 1000)) ]; then timed_out=1; fi
cd "$root"
if [ ! -s "$XML_OUTPUT_FILE" ]; then
  name="$\{TEST_BINARY#./}"
  if [ -n "$\{TEST_TOTAL_SHARDS-}" ]; then name="$\{name}_shard_$((TEST_SHARD_INDEX + 1))/$TEST_TOTAL_SHARDS"; fi
  errors=0; message=''
  if [ "$code" != 0 ]; then errors=1; message="<error message=\"exited with error code $code\"></error>"; fi
  seconds=$((duration_ms / 1000))
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n'
    printf '<testsuite name="%s" tests="1" failures="0" errors="%s">\n' "$name" "$errors"
    printf '  <testcase name="%s" status="run" duration="%s" time="%s">%s</testcase>\n' "$name" "$seconds" "$seconds" "$message"
    printf '  <system-out><![CDATA['
    xml_character_data "$log"
    printf ']]></system-out>\n</testsuite>\n</testsuites>\n'
  } > "$XML_OUTPUT_FILE"
fi
zip_file="$TEST_UNDECLARED_OUTPUTS_DIR/outputs.zip"
shopt -s nullglob dotglob; undeclared=("$TEST_UNDECLARED_OUTPUTS_DIR"/*); shopt -u nullglob dotglob
if [ $\{#undeclared[@]} -gt 0 ]; then
  (cd "$TEST_UNDECLARED_OUTPUTS_DIR" && zip -qr "$scratch/kiln-outputs.zip" . && find . -mindepth 1 -delete && mv "$scratch/kiln-outputs.zip" outputs.zip) \
    || echo "kiln: could not zip the undeclared outputs (is zip installed?)" >> "$log"
fi
[ -f "$zip_file" ] || printf 'PK\005\006\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$zip_file"
printf 'exit_code=%s\ntimed_out=%s\nduration_ms=%s\n' "$code" "$timed_out" "$duration_ms" > "$status"
[ "$code" = 0 ]
`.replaceAll('$\\{', '${');
