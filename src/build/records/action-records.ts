import type { Action } from '../../actions/index.js';
import type { ActionFailure, ActionOutput, ExecutionReporter, ExecutionSummary, ProcessEnd, ProcessKind } from '../../exec/index.js';

/** One action execution ran (or restored from a cache), as the build's records need it. */
export interface ActionRecord {
  readonly action: Action;
  /** Milliseconds since the epoch. */
  readonly startMs: number;
  readonly endMs: number;
  /** How it was satisfied, by Bazel's runner names: `linux-sandbox`, `local`, `remote`, `internal`, `disk cache hit`... */
  readonly runner: string;
  /** It came from the disk or remote cache. */
  readonly cacheHit: boolean;
  readonly exitCode: number;
  readonly timedOut: boolean;
  /** Set when the action failed the build. */
  readonly failure?: ActionFailure;
}

/** What wants to hear of each action as it ends (the Build Event Protocol streams failed ones at once). */
export type ActionRecordListener = (record: ActionRecord) => void;

/**
 * An ExecutionReporter decorator that keeps, for each action that ran or came from a cache, when it
 * started and ended and how: what the profile, the execution log and the Build Event Protocol say
 * about execution. Actions the local action cache found up to date are not recorded (Bazel's
 * execution log and profile leave them out too: no spawn ran).
 */
export class ActionRecorder implements ExecutionReporter {
  readonly records: ActionRecord[] = [];
  private readonly started = new Map<Action, { atMs: number; runner: string }>();
  private readonly failures = new Map<Action, ActionFailure>();

  constructor(
    private readonly inner: ExecutionReporter,
    private readonly listener: ActionRecordListener,
    private readonly now: () => number = Date.now,
  ) {}

  buildStarted(totalActions: number): void {
    this.inner.buildStarted(totalActions);
  }
  actionStarted(action: Action, runnerName: string, command: string): void {
    if (!this.started.has(action)) this.started.set(action, { atMs: this.now(), runner: runnerName });
    this.inner.actionStarted(action, runnerName, command);
  }
  actionFailed(failure: ActionFailure): void {
    this.failures.set(failure.action, failure);
    // A failure may come without actionFinished (the process could not start): record it here.
    if (!this.records.some((r) => r.action === failure.action)) this.record(failure.action, undefined, undefined, failure);
    this.inner.actionFailed(failure);
  }
  actionFinished(action: Action, kind: ProcessKind | undefined, process?: ProcessEnd): void {
    if (kind !== undefined) this.record(action, kind, process, this.failures.get(action));
    this.inner.actionFinished(action, kind, process);
  }
  actionOutput(action: Action, output: ActionOutput): void {
    this.inner.actionOutput?.(action, output);
  }
  warning(message: string): void {
    this.inner.warning(message);
  }
  buildFinished(summary: ExecutionSummary): void {
    this.inner.buildFinished(summary);
  }
  flush(): void {
    this.inner.flush?.();
  }
  interject(write: () => void): void {
    if (this.inner.interject) this.inner.interject(write);
    else write();
  }

  private record(action: Action, kind: ProcessKind | undefined, process: ProcessEnd | undefined, failure: ActionFailure | undefined): void {
    const endMs = this.now();
    const started = this.started.get(action);
    this.started.delete(action);
    const record: ActionRecord = {
      action,
      startMs: started?.atMs ?? (process ? endMs - process.wallTimeMs : endMs),
      endMs,
      runner: kind ?? started?.runner ?? 'local',
      cacheHit: kind === 'disk cache hit' || kind === 'remote cache hit',
      exitCode: process?.exitCode ?? (failure ? failedExitCode(failure) : 0),
      timedOut: process?.timedOut ?? false,
      ...(failure ? { failure } : {}),
    };
    this.records.push(record);
    this.listener(record);
  }
}

/** A failed action's exit code as its message states it (`... failed: (Exit 2)`); 1 when it does not say. */
function failedExitCode(failure: ActionFailure): number {
  const stated = /\(Exit (\d+)\)/.exec(failure.message);
  return stated ? Number(stated[1]) : 1;
}
