import { StringDecoder } from 'node:string_decoder';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { TestRun, TestTarget } from '../analysis/index.js';
import type { ActionFailure, ActionOutput, ExecutionReporter, ExecutionSummary, ProcessEnd, ProcessKind } from '../exec/index.js';
import type { BuildUi } from './events.js';
import { readRunResult, type RunResult } from './test-results.js';
import { completeTimedOutRun } from './timed-out-run.js';

export type TestOutputMode = 'summary' | 'errors' | 'all' | 'streamed';

/** Where the reporter says what it saw: the command line's printer. */
export type TestRunListener = Pick<BuildUi, 'testRunFinished' | 'testOutput'>;

/** One finished attempt of one run. */
interface AttemptRecord {
  readonly result: RunResult;
  readonly cached: boolean;
  /** It ran on a remote executor (Bazel's summary then says the test fails remotely). */
  readonly remote: boolean;
  /** Where its log is now (moved under test_attempts/ when the run was tried again). */
  logPath: string;
}

/**
 * Watches a `kiln test` execution: records how each test action ended (result, from a cache or
 * not) and tells the listener of each finished run, which prints Bazel's `FAIL: //x (see log)` line
 * and, per --test_output, the log; every other event goes to the build's reporter. The build's
 * closing lines are held back until `finish`, so flaky attempts can run first and the closing line
 * can count failed tests.
 */
export class TestRunReporter implements ExecutionReporter {
  private readonly runOf = new Map<Action, TestRun>();
  private readonly targetOf = new Map<Action, TestTarget>();
  readonly attempts = new Map<TestRun, AttemptRecord[]>();
  readonly failedActions = new Set<Action>();
  private held: ExecutionSummary | undefined;

  constructor(
    private readonly inner: ExecutionReporter,
    tests: readonly TestTarget[],
    private readonly execRoot: string,
    private readonly mode: TestOutputMode,
    private readonly listener: TestRunListener,
    /** Attempts a failing run gets (`--flaky_test_attempts`): a run tried again has its log moved first. */
    private readonly attemptsFor: (flaky: boolean) => number = () => 1,
  ) {
    for (const t of tests) {
      for (const r of t.runs) {
        this.runOf.set(r.action, r);
        this.targetOf.set(r.action, t);
      }
    }
  }

  buildStarted(total: number): void {
    if (!this.held) this.inner.buildStarted(total);
  }
  actionStarted(...args: Parameters<ExecutionReporter['actionStarted']>): void {
    this.inner.actionStarted(...args);
  }

  /**
   * With --test_output=streamed, where a test action's live output goes: stdout, as it comes (the
   * tests run one at a time, so their outputs do not mix). Execution hands it over before
   * `actionFinished`, so the output comes before the test's FAIL line.
   */
  liveOutputOf(action: Action): ((chunk: Buffer) => void) | undefined {
    if (this.mode !== 'streamed' || !this.runOf.has(action)) return undefined;
    const decoder = new StringDecoder('utf8');
    return (chunk) => {
      const text = decoder.write(chunk);
      if (text !== '') this.interject(() => this.listener.testOutput(text));
    };
  }
  actionFailed(failure: ActionFailure): void {
    this.failedActions.add(failure.action);
    this.inner.actionFailed(failure);
  }
  warning(message: string): void {
    this.inner.warning(message);
  }
  flush(): void {
    this.inner.flush?.();
  }
  interject(write: () => void): void {
    if (this.inner.interject) this.inner.interject(write);
    else write();
  }

  actionOutput(action: Action, output: ActionOutput): void {
    this.inner.actionOutput?.(action, output);
  }

  actionFinished(action: Action, kind: ProcessKind | undefined, process?: ProcessEnd): void {
    this.inner.actionFinished(action, kind, process);
    const run = this.runOf.get(action);
    if (!run) return;
    const logPath = join(this.execRoot, run.logDir, 'test.log');
    const result =
      readRunResult(this.execRoot, run.logDir) ??
      (process?.timedOut ? completeTimedOutRun(this.execRoot, run.logDir, action, process) : { status: 'FAILED', durationMs: 0, exitCode: -1 });
    const cached = kind === undefined || kind === 'disk cache hit' || kind === 'remote cache hit';
    const list = this.attempts.get(run) ?? [];
    list.push({ result, cached, remote: kind === 'remote', logPath });
    this.attempts.set(run, list);
    this.interject(() => this.report(run, action, list, result, logPath));
  }

  /** What Bazel prints for a finished run: FAIL with the log, and the log itself per --test_output. */
  private report(run: TestRun, action: Action, list: readonly AttemptRecord[], result: RunResult, logPath: string): void {
    const name = action.progressMessage.replace(/^Testing /, '');
    const retried = list.length < this.attemptsFor(this.targetOf.get(action)!.flaky);
    const shownLog = retried ? join(this.execRoot, run.logDir, 'test_attempts', `attempt_${list.length}.log`) : logPath;
    const failed = result.status !== 'PASSED';
    this.listener.testRunFinished({
      name,
      failed,
      timedOut: result.status === 'TIMEOUT',
      shownLog,
      logPath,
      // As Bazel, --test_output=all shows a cached result's log too.
      printLog: this.mode === 'all' || (this.mode === 'errors' && failed),
    });
  }

  /** Holds the closing lines back (see `finish`). */
  buildFinished(summary: ExecutionSummary): void {
    this.held = this.held ? merge(this.held, summary) : summary;
  }

  /** Prints the build's closing lines, saying how many tests failed. */
  finish(failedTests: number): void {
    if (!this.held) return;
    this.inner.buildFinished({ ...this.held, failedTests });
  }
}

/**
 * Two executions of one command (exclusive tests, a flaky test's later attempts) as one summary:
 * the later one's actions are counted when they ran a process (the producers it found up to date
 * were counted by the first).
 */
function merge(a: ExecutionSummary, b: ExecutionSummary): ExecutionSummary {
  const processes = { ...a.processes };
  let ran = 0;
  for (const [k, v] of Object.entries(b.processes) as [ProcessKind, number][]) {
    processes[k] += v;
    ran += v;
  }
  return { success: a.success && b.success, totalActions: a.totalActions + ran, processes, failures: [...a.failures, ...b.failures] };
}
