import type { TestTarget } from '../analysis/index.js';
import { readTestCases, type TestCase, type TestOutcome } from '../build/index.js';
import { Label } from '../loading/index.js';
import type { CliIO } from './io.js';

/** `--test_summary`: which tests the closing summary lists, and whether it lists their test cases. */
export type TestSummaryFormat = 'short' | 'terse' | 'detailed' | 'testcase' | 'none';

/** Bazel's NUM_FAILED_TO_BUILD: more tests that failed to build are counted, not listed. */
const FAILED_TO_BUILD_LISTED = 5;

/**
 * Bazel's per-test line (TestSummaryPrinter.print): the label padded so that the status ends the
 * 78th column's word (`Strings.padEnd(label, 78 - status.length) + " " + status`), how many of
 * several attempts failed (`, failed in 1 out of 2` for FLAKY, ` in 2 out of 2` for FAILED and
 * TIMEOUT), the time (the longest attempt; a Stats line when there were several), then the logs of
 * the failed attempts.
 */
export function formatTestLines(o: TestOutcome, cases?: readonly TestCase[]): string {
  const status = `${o.cached ? '(cached) ' : ''}${o.status}`;
  let line = `${o.label.padEnd(78 - status.length)} ${status}${attemptSummary(o)}`;
  const times = o.durationsMs;
  if (times.length > 0 && o.status !== 'NO STATUS' && o.status !== 'FAILED TO BUILD') line += ` in ${seconds(Math.max(...times))}`;
  let text = `${line}\n`;
  if (times.length > 1) text += `  ${formatStats(times)}\n`;
  if (cases === undefined) {
    for (const log of o.failedLogs) text += `  ${log}\n`;
    return text;
  }
  // --test_summary=detailed: the test cases instead of the logs (passed ones first, as Bazel prints them).
  for (const c of cases) if (c.status === 'PASSED') text += formatTestCase(c);
  if (o.status === 'FAILED') {
    const failed = cases.filter((c) => c.status === 'FAILED' || c.status === 'ERROR');
    if (failed.length === 0) text += '    (individual test case information not available) \n';
    for (const c of failed) text += formatTestCase(c);
  }
  return text;
}

/** Bazel's printTestCase: `    FAILED  my.Class.name (1.5s)`, the status padded to 8. */
function formatTestCase(c: TestCase): string {
  return `    ${c.status.padEnd(8)}${c.className}.${c.name}${c.durationMs === undefined ? '' : ` (${seconds(c.durationMs)})`}\n`;
}

/**
 * `Test cases: finished with 2 passing, 0 skipped and 3 failing out of 5 test cases`, for
 * `--test_summary=detailed|testcase`, as present-day Bazel counts them: a run whose test.xml gives no
 * test cases counts as one case of unknown outcome and adds the disclaimer. (Bazel 4.2.3 printed no
 * skipped count.)
 */
export function formatTestCaseLine(outcomes: readonly TestOutcome[]): string {
  let total = 0;
  let failed = 0;
  let skipped = 0;
  let unknown = 0;
  for (const o of outcomes) {
    const { cases, unknownRuns } = readTestCases(o.xmlPaths);
    total += cases.length + unknownRuns;
    unknown += unknownRuns;
    failed += cases.filter((c) => c.status === 'FAILED' || c.status === 'ERROR').length;
    skipped += cases.filter((c) => c.status === 'SKIPPED').length;
  }
  const passing = total - failed - unknown - skipped;
  const line = `Test cases: finished with ${passing} passing, ${skipped} skipped and ${failed} failing out of ${total} test cases`;
  return unknown > 0 ? `${line} (some targets did not have test case information)` : line;
}

/** Bazel's getAttemptSummary: said only when there were several attempts. */
function attemptSummary(o: TestOutcome): string {
  if (!o.attempts || o.attempts.total <= 1) return '';
  if (o.status === 'FLAKY') return `, failed in ${o.attempts.failed} out of ${o.attempts.total}`;
  if (o.status === 'FAILED' || o.status === 'TIMEOUT') return ` in ${o.attempts.failed} out of ${o.attempts.total}`;
  return '';
}

/**
 * `Stats over 3 runs: max = 0.4s, min = 0.1s, avg = 0.3s, dev = 0.1s`, computed as Bazel's
 * getTimeSummary does: on whole milliseconds, the mean and the (population) deviation cut to whole
 * milliseconds before they are printed.
 */
export function formatStats(durationsMs: readonly number[]): string {
  const n = durationsMs.length;
  const sum = durationsMs.reduce((a, b) => a + b, 0);
  const mean = sum / n;
  const sumOfSquares = durationsMs.reduce((a, d) => a + d * d, 0);
  const dev = Math.sqrt((sumOfSquares - sum * mean) / n);
  const max = seconds(Math.max(...durationsMs));
  return `Stats over ${n} runs: max = ${max}, min = ${seconds(Math.min(...durationsMs))}, avg = ${seconds(Math.trunc(mean))}, dev = ${seconds(Math.trunc(dev))}`;
}

/** `Executed 1 out of 2 tests: 1 test passes and 1 fails locally.` (`remotely` for a test that ran on a remote executor). */
export function formatExecutedLine(outcomes: readonly TestOutcome[]): string {
  const total = outcomes.length;
  const executed = outcomes.filter((o) => o.executed).length;
  const count = (...statuses: TestOutcome['status'][]) => outcomes.filter((o) => statuses.includes(o.status)).length;
  const passed = count('PASSED', 'FLAKY');
  const failedHere = (remote: boolean) =>
    outcomes.filter((o) => (o.status === 'FAILED' || o.status === 'TIMEOUT') && (o.ranRemotely === true) === remote).length;
  const failedLocally = failedHere(false);
  const failedRemotely = failedHere(true);
  const failedToBuild = count('FAILED TO BUILD');
  const noStatus = count('NO STATUS');
  const parts: string[] = [];
  if (passed > 0) parts.push(`${passed} test${passed === 1 ? ' passes' : 's pass'}`);
  if (failedToBuild > 0) parts.push(`${failedToBuild} fail${failedToBuild === 1 ? 's' : ''} to build`);
  if (failedLocally > 0) parts.push(`${failedLocally} fail${failedLocally === 1 ? 's' : ''} locally`);
  if (failedRemotely > 0) parts.push(`${failedRemotely} fail${failedRemotely === 1 ? 's' : ''} remotely`);
  if (noStatus > 0) parts.push(`${noStatus} ${noStatus === 1 ? 'was' : 'were'} skipped`);
  const joined = parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  return `Executed ${executed} out of ${total} test${total === 1 ? '' : 's'}: ${joined}.`;
}

/**
 * Bazel's timeInSec: whole milliseconds as seconds with one decimal, `String.format("%.1f")`
 * rounding half up (150 ms is 0.2s), which JavaScript's toFixed on the binary double does not.
 */
export function seconds(ms: number): string {
  const tenths = Math.floor((Math.trunc(ms) + 50) / 100);
  return `${Math.floor(tenths / 10)}.${tenths % 10}s`;
}

/** Bazel's BlazeTestStatus numbers: the summary lists lower numbers first. */
const STATUS_ORDER: Readonly<Record<TestOutcome['status'], number>> = { 'NO STATUS': 0, PASSED: 1, FLAKY: 2, TIMEOUT: 3, FAILED: 4, 'FAILED TO BUILD': 7 };

/**
 * Bazel's order (TestSummary.compareTo): cached results first (a test that never ran counts as
 * cached: none of its zero runs executed), then by status, then by label (repository, package, name).
 */
export function sortOutcomes(outcomes: readonly TestOutcome[]): TestOutcome[] {
  const cachedFirst = (o: TestOutcome) => (o.cached || o.status === 'NO STATUS' || o.status === 'FAILED TO BUILD' ? 0 : 1);
  const parts = (label: string) => {
    const { repo, pkg, name } = Label.parse(label);
    return [repo, pkg, name];
  };
  const compareLabels = (a: string, b: string) => {
    const pa = parts(a);
    const pb = parts(b);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const x = pa[i] ?? '';
      const y = pb[i] ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
  return [...outcomes].sort((a, b) => cachedFirst(a) - cachedFirst(b) || STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || compareLabels(a.label, b.label));
}

/** Bazel's timeout ranges (seconds) for the test size warning: a passing run outside its range is wrongly sized. */
const TIMEOUT_RANGES: readonly (readonly [string, string, number, number])[] = [
  ['short', 'small', 0, 60],
  ['moderate', 'medium', 30, 300],
  ['long', 'large', 300, 900],
  ['eternal', 'enormous', 900, Infinity],
];

/**
 * The closing summary: `TIMEOUT`/`FLAKY` blocks on stderr, one line per test in Bazel's order, the
 * `Executed` line and the size warning on stdout.
 */
export function printTestSummary(
  outcomes: readonly TestOutcome[],
  tests: readonly TestTarget[],
  options: { readonly verboseTimeoutWarnings: boolean; readonly format: TestSummaryFormat },
  io: CliIO,
): void {
  const { verboseTimeoutWarnings, format } = options;
  const timeoutOf = new Map(tests.map((t) => [t.label, t.timeout]));
  let wrongSize = false;
  for (const o of outcomes) {
    if (o.status !== 'PASSED' || o.durationsMs.length === 0) continue;
    const maxMs = Math.max(...o.durationsMs);
    const max = maxMs / 1000;
    const range = TIMEOUT_RANGES.find(([name]) => name === timeoutOf.get(o.label));
    if (!range || (max >= range[2] && max <= range[3])) continue;
    wrongSize = true;
    if (verboseTimeoutWarnings) {
      const fit = TIMEOUT_RANGES.find(([, , lo, hi]) => max >= lo && max <= hi) ?? TIMEOUT_RANGES[0]!;
      io.stderr.write(
        `WARNING: ${o.label}: Test execution time (${seconds(maxMs)} excluding execution overhead) outside of range for ${range[0].toUpperCase()} tests. Consider setting timeout="${fit[0]}" or size="${fit[1]}".\n`,
      );
    }
  }
  let text = '';
  let failedToBuild = 0;
  for (const o of format === 'none' || format === 'testcase' ? [] : sortOutcomes(outcomes)) {
    // TerminalTestResultNotifier.printSummary: terse leaves out what passed or never ran.
    if (format === 'terse' && (o.status === 'PASSED' || o.status === 'NO STATUS')) continue;
    if (o.status === 'FAILED TO BUILD') {
      if (failedToBuild === FAILED_TO_BUILD_LISTED) text += '(Skipping other failed to build tests)\n';
      if (++failedToBuild > FAILED_TO_BUILD_LISTED) continue;
    }
    text += formatTestLines(o, format === 'detailed' ? readTestCases(o.xmlPaths).cases : undefined);
  }
  if (format === 'detailed' || format === 'testcase') text += `${formatTestCaseLine(outcomes)}\n`;
  text += `\n${formatExecutedLine(outcomes)}\n`;
  if (wrongSize && !verboseTimeoutWarnings) {
    text += 'There were tests whose specified size is too big. Use the --test_verbose_timeout_warnings command line option to see which ones these are.\n';
  }
  io.stdout.write(text);
}

/**
 * Bazel's `TIMEOUT: //x (Summary)`, `FLAKY: //x (Summary)` and (for a test with more than one failed
 * log) `FAILED: //x (Summary)` blocks, printed before the closing lines: the summaries its UI
 * event handler finds new (testSummaryProvidesNewInformation).
 */
export function summaryBlocks(outcomes: readonly TestOutcome[]): string {
  let text = '';
  for (const o of outcomes) {
    const news = o.status === 'TIMEOUT' || o.status === 'FLAKY' || (o.status === 'FAILED' && o.failedLogs.length > 1);
    if (!news) continue;
    text += `${o.status}: ${o.label} (Summary)\n`;
    for (const log of o.failedLogs) text += `      ${log}\n`;
  }
  return text;
}
