import { Label } from '../loading/index.js';

/** One test target's outcome, as the closing summary reports it. */
export interface TestOutcome {
  readonly label: string;
  readonly status: 'PASSED' | 'FAILED' | 'TIMEOUT' | 'FLAKY' | 'NO STATUS' | 'FAILED TO BUILD';
  /** Every run taken into account (shards, runs, attempts), in seconds. */
  readonly durations: readonly number[];
  /** All runs came from a cache. */
  readonly cached: boolean;
  /** Failed attempts of a FLAKY test, and the number of attempts. */
  readonly flakyFailures?: { readonly failed: number; readonly attempts: number };
  /** Absolute paths of the logs of failed runs (attempt logs for a FLAKY test). */
  readonly failedLogs: readonly string[];
  /** Whether the test ran in this command (not cached, not failed to build, not skipped). */
  readonly executed: boolean;
  /** A run ran on a remote executor: a failure then counts as failing remotely, as in Bazel's summary. */
  readonly ranRemotely?: boolean;
}

/**
 * Bazel's per-test line: the label padded so that the status ends the 78th column's word
 * (`Strings.padEnd(label, 78 - status.length) + " " + status`), then the time and the logs of failures.
 */
export function formatTestLines(o: TestOutcome): string {
  const status = `${o.cached ? '(cached) ' : ''}${o.status}`;
  let line = `${o.label.padEnd(78 - status.length)} ${status}`;
  if (o.flakyFailures) line += `, failed in ${o.flakyFailures.failed} out of ${o.flakyFailures.attempts}`;
  if (o.durations.length > 0 && o.status !== 'NO STATUS' && o.status !== 'FAILED TO BUILD') line += ` in ${seconds(Math.max(...o.durations))}`;
  let text = `${line}\n`;
  if (o.durations.length > 1) text += `  ${formatStats(o.durations)}\n`;
  for (const log of o.failedLogs) text += `  ${log}\n`;
  return text;
}

/** `Stats over 3 runs: max = 0.4s, min = 0.1s, avg = 0.3s, dev = 0.1s` (population deviation). */
export function formatStats(durations: readonly number[]): string {
  const n = durations.length;
  const avg = durations.reduce((a, b) => a + b, 0) / n;
  const dev = Math.sqrt(durations.reduce((a, d) => a + (d - avg) ** 2, 0) / n);
  return `Stats over ${n} runs: max = ${seconds(Math.max(...durations))}, min = ${seconds(Math.min(...durations))}, avg = ${seconds(avg)}, dev = ${seconds(dev)}`;
}

/** `Executed 1 out of 2 tests: 1 test passes and 1 fails locally.` (`remotely` for a test that ran on a remote executor). */
export function formatExecutedLine(outcomes: readonly TestOutcome[]): string {
  const total = outcomes.length;
  const executed = outcomes.filter((o) => o.executed).length;
  const count = (...statuses: TestOutcome['status'][]) => outcomes.filter((o) => statuses.includes(o.status)).length;
  const passed = count('PASSED', 'FLAKY');
  const failedHere = (remote: boolean) => outcomes.filter((o) => (o.status === 'FAILED' || o.status === 'TIMEOUT') && (o.ranRemotely === true) === remote).length;
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

/** Bazel's time: seconds with one decimal. */
function seconds(s: number): string {
  return `${s.toFixed(1)}s`;
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
