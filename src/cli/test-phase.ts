import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { TestRun, TestTarget } from '../analysis/index.js';
import type { TestRunReporter, TestOutputStreams } from './test-run-reporter.js';
import { formatExecutedLine, formatTestLines, sortOutcomes, type TestOutcome } from './test-summary.js';

/**
 * The graph's test actions with the client's values of their `env_inherit` names (unset names are left
 * out), read when the command runs (so the analysis cache never holds them); `--test_env` and the
 * rule's `env` win over them, as in Bazel.
 */
export function withInheritedEnv(
  tests: readonly TestTarget[],
  actions: readonly Action[],
  clientEnv: Readonly<Record<string, string | undefined>>,
): { tests: TestTarget[]; actions: Action[] } {
  const replaced = new Map<Action, Action>();
  const out = tests.map((t) => {
    if (t.envInherit.length === 0) return t;
    const inherited: Record<string, string> = {};
    for (const name of t.envInherit) if (clientEnv[name] !== undefined) inherited[name] = clientEnv[name]!;
    const runs = t.runs.map((r) => {
      const action = { ...r.action, env: { ...inherited, ...r.action.env } };
      replaced.set(r.action, action);
      return { ...r, action };
    });
    return { ...t, runs };
  });
  return { tests: out, actions: replaced.size === 0 ? [...actions] : actions.map((a) => replaced.get(a) ?? a) };
}

/** Removes the attempt logs an earlier command left (`test_attempts/`), before the tests run again. */
export function clearAttemptLogs(tests: readonly TestTarget[], execRoot: string): void {
  for (const t of tests) for (const run of t.runs) rmSync(join(execRoot, run.logDir, 'test_attempts'), { recursive: true, force: true });
}

/**
 * Runs the failed runs of each test again while it has attempts left (`--flaky_test_attempts`, or
 * 3 for `flaky = True`), as Bazel does: the failed attempt's log and XML move to
 * `test_attempts/attempt_N.{log,xml}` first. `execute` runs the retried actions as the build did
 * (their inputs are up to date; a failed result was not cached, so the action runs again).
 */
export async function retryFailedRuns(
  tests: readonly TestTarget[],
  reporter: TestRunReporter,
  attemptsFor: (flaky: boolean) => number,
  execRoot: string,
  execute: (actions: readonly Action[]) => Promise<unknown>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const again: TestRun[] = [];
    for (const t of tests) {
      if (attempt >= attemptsFor(t.flaky)) continue;
      for (const run of t.runs) {
        const tries = reporter.attempts.get(run);
        if (tries?.length === attempt && tries[attempt - 1]!.result.status !== 'PASSED') again.push(run);
      }
    }
    if (again.length === 0) return;
    for (const run of again) {
      const last = reporter.attempts.get(run)![attempt - 1]!;
      const dir = join(execRoot, run.logDir);
      mkdirSync(join(dir, 'test_attempts'), { recursive: true });
      last.logPath = join(dir, 'test_attempts', `attempt_${attempt}.log`);
      renameSync(join(dir, 'test.log'), last.logPath);
      renameSync(join(dir, 'test.xml'), join(dir, 'test_attempts', `attempt_${attempt}.xml`));
    }
    await execute(again.map((r) => r.action));
  }
}

/**
 * Each test's outcome from what the reporter saw: runs never run are FAILED TO BUILD when an
 * action they needed failed, else NO STATUS; a test whose runs all passed in the end is FLAKY if
 * an earlier attempt failed; otherwise a failed run makes it TIMEOUT (a run timed out) or FAILED.
 */
export function testOutcomes(tests: readonly TestTarget[], reporter: TestRunReporter, actions: readonly Action[]): TestOutcome[] {
  const broken = brokenOutputs(actions, reporter.failedActions);
  return tests.map((t): TestOutcome => {
    const tries = t.runs.map((r) => reporter.attempts.get(r) ?? []);
    if (tries.some((a) => a.length === 0)) {
      const failedToBuild = t.runs.some((r) => r.action.inputs.some((i) => broken.has(i.execPath)) || reporter.failedActions.has(r.action));
      return { label: t.label, status: failedToBuild ? 'FAILED TO BUILD' : 'NO STATUS', durations: [], cached: false, failedLogs: [], executed: false };
    }
    const all = tries.flat();
    const durations = all.map((a) => a.result.durationMs / 1000);
    const finals = tries.map((a) => a[a.length - 1]!);
    const executed = all.some((a) => !a.cached);
    const cached = !executed;
    if (finals.every((f) => f.result.status === 'PASSED')) {
      const failedAttempts = all.filter((a) => a.result.status !== 'PASSED');
      if (failedAttempts.length === 0) return { label: t.label, status: 'PASSED', durations, cached, failedLogs: [], executed };
      return {
        label: t.label,
        status: 'FLAKY',
        durations,
        cached,
        flakyFailures: { failed: failedAttempts.length, attempts: all.length },
        failedLogs: failedAttempts.map((a) => a.logPath),
        executed,
      };
    }
    const failedFinals = finals.filter((f) => f.result.status !== 'PASSED');
    const status = failedFinals.some((f) => f.result.status === 'TIMEOUT') ? 'TIMEOUT' : 'FAILED';
    const ranRemotely = all.some((a) => a.remote);
    return { label: t.label, status, durations, cached, failedLogs: failedFinals.map((f) => f.logPath), executed, ranRemotely };
  });
}

/** Exec paths that could not be made: outputs of failed actions and of every action reading one. */
function brokenOutputs(actions: readonly Action[], failed: ReadonlySet<Action>): Set<string> {
  const broken = new Set<string>();
  if (failed.size === 0) return broken;
  const producer = new Map<string, Action>();
  for (const a of actions) for (const o of a.outputs) producer.set(o.execPath, a);
  const state = new Map<Action, boolean>();
  const isBroken = (a: Action): boolean => {
    const known = state.get(a);
    if (known !== undefined) return known;
    state.set(a, false); // the graph is acyclic; this only guards against surprises
    let result = failed.has(a);
    for (const input of a.inputs) {
      const p = input.kind === 'derived' ? producer.get(input.execPath) : undefined;
      if (p && isBroken(p)) result = true;
    }
    state.set(a, result);
    return result;
  };
  for (const a of actions) if (isBroken(a)) for (const o of a.outputs) broken.add(o.execPath);
  return broken;
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
export function printTestSummary(outcomes: readonly TestOutcome[], tests: readonly TestTarget[], verboseTimeoutWarnings: boolean, out: TestOutputStreams): void {
  const timeoutOf = new Map(tests.map((t) => [t.label, t.timeout]));
  let wrongSize = false;
  for (const o of outcomes) {
    if (o.status !== 'PASSED' || o.durations.length === 0) continue;
    const max = Math.max(...o.durations);
    const range = TIMEOUT_RANGES.find(([name]) => name === timeoutOf.get(o.label));
    if (!range || (max >= range[2] && max <= range[3])) continue;
    wrongSize = true;
    if (verboseTimeoutWarnings) {
      const fit = TIMEOUT_RANGES.find(([, , lo, hi]) => max >= lo && max <= hi) ?? TIMEOUT_RANGES[0]!;
      out.stderr(
        `WARNING: ${o.label}: Test execution time (${max.toFixed(1)}s excluding execution overhead) outside of range for ${range[0].toUpperCase()} tests. Consider setting timeout="${fit[0]}" or size="${fit[1]}".\n`,
      );
    }
  }
  let text = '';
  for (const o of sortOutcomes(outcomes)) text += formatTestLines(o);
  text += `\n${formatExecutedLine(outcomes)}\n`;
  if (wrongSize && !verboseTimeoutWarnings) {
    text += 'There were tests whose specified size is too big. Use the --test_verbose_timeout_warnings command line option to see which ones these are.\n';
  }
  out.stdout(text);
}

/** Bazel's `TIMEOUT: //x (Summary)` and `FLAKY: //x (Summary)` blocks, printed before the closing lines. */
export function summaryBlocks(outcomes: readonly TestOutcome[]): string {
  let text = '';
  for (const o of outcomes) {
    if (o.status !== 'TIMEOUT' && o.status !== 'FLAKY') continue;
    text += `${o.status}: ${o.label} (Summary)\n`;
    for (const log of o.failedLogs) text += `      ${log}\n`;
  }
  return text;
}

