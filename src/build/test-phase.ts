import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { TestRun, TestTarget } from '../analysis/index.js';
import type { StrategyFlags } from '../exec/index.js';
import type { TestRunReporter } from './test-run-reporter.js';
import type { TestOutcome } from './test-outcome.js';

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

/** Bazel's warning for --test_output=streamed, which also sets --test_sharding_strategy=disabled and --test_strategy=exclusive. */
export const STREAMED_OUTPUT_WARNING = 'Streamed test output requested. All tests will be run locally, without sharding, one at a time';

/**
 * The strategies of streamed tests: those of the test actions (`--strategy=TestRunner`, else
 * `--spawn_strategy`) that run here, never remote, as Bazel's exclusive test strategy does; sandboxed,
 * else local, when none of them does.
 */
export function localTestStrategies(flags: StrategyFlags): StrategyFlags {
  const listed = flags.strategyByMnemonic?.['TestRunner'] ?? flags.spawnStrategy ?? [];
  const here = listed.filter((s) => s === 'sandboxed' || s === 'local');
  return { ...flags, strategyByMnemonic: { ...flags.strategyByMnemonic, TestRunner: here.length > 0 ? here : ['sandboxed', 'local'] } };
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
 * As in Bazel's TestResultAnalyzer, every attempt counts: its time, and its log among the failed
 * logs when it failed (`FAILED in 3 out of 3` for a test whose retries all failed).
 */
export function testOutcomes(tests: readonly TestTarget[], reporter: TestRunReporter, actions: readonly Action[]): TestOutcome[] {
  const broken = brokenOutputs(actions, reporter.failedActions);
  return tests.map((t): TestOutcome => {
    const tries = t.runs.map((r) => reporter.attempts.get(r) ?? []);
    if (tries.some((a) => a.length === 0)) {
      const failedToBuild = t.runs.some((r) => r.action.inputs.some((i) => broken.has(i.execPath)) || reporter.failedActions.has(r.action));
      return {
        label: t.label,
        status: failedToBuild ? 'FAILED TO BUILD' : 'NO STATUS',
        durationsMs: [],
        cached: false,
        failedLogs: [],
        xmlPaths: [],
        executed: false,
      };
    }
    const all = tries.flat();
    const executed = all.some((a) => !a.cached);
    const failedAttempts = all.filter((a) => a.result.status !== 'PASSED');
    // Per run, as Bazel's test strategy lists them: the run's own test.log, then its retried attempts' logs.
    const failedLogs = tries.flatMap((a) => [...a.slice(-1), ...a.slice(0, -1)].filter((x) => x.result.status !== 'PASSED').map((x) => x.logPath));
    const common = {
      label: t.label,
      durationsMs: all.map((a) => Math.trunc(a.result.durationMs)),
      cached: !executed,
      attempts: { failed: failedAttempts.length, total: all.length },
      failedLogs,
      executed,
    };
    const finals = tries.map((a) => a[a.length - 1]!);
    const withCases = { ...common, xmlPaths: finals.map((f) => join(dirname(f.logPath), 'test.xml')) };
    if (finals.every((f) => f.result.status === 'PASSED')) return { ...withCases, status: failedAttempts.length === 0 ? 'PASSED' : 'FLAKY' };
    const status = finals.some((f) => f.result.status === 'TIMEOUT') ? 'TIMEOUT' : 'FAILED';
    return { ...withCases, status, ranRemotely: all.some((a) => a.remote) };
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
