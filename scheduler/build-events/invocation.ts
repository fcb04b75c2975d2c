import { buildEventStream, msFromTimestamp, type wellKnown } from '../../src/core/index.js';

/**
 * Where an invocation stands. `running`: its event stream has not finished (a stream is open, or none
 * has been yet). `succeeded` / `failed`: its stream finished with Bazel's BuildFinished, by its exit
 * code. `partial`: its stream broke (the client was killed, the connection dropped, a limit refused
 * an event) or finished without BuildFinished, so what is stored is not the whole build; a client that
 * resumes the stream makes it `running` again.
 */
export type InvocationStatus = 'running' | 'succeeded' | 'failed' | 'partial';

/** A target of the invocation, from its TargetConfigured, TargetComplete and TestSummary events. */
export interface InvocationTarget {
  readonly label: string;
  /** `genrule rule`, `sh_test rule`, ... */
  readonly kind?: string;
  /** Whether it built; absent until its TargetComplete arrives. */
  readonly success?: boolean;
  /** The TestSummary's overall status (`PASSED`, `FAILED`, `FLAKY`, ...), for tests. */
  readonly testStatus?: string;
}

/** What the list of invocations shows of one. */
export interface InvocationSummary {
  readonly invocationId: string;
  readonly buildId: string;
  /** The instance it was published to (the Build Event Service request's `project_id`). */
  readonly instance: string;
  readonly status: InvocationStatus;
  /** `build`, `test`, ... (BuildStarted); empty until it arrives. */
  readonly command: string;
  /** The target patterns as given (`//...`). */
  readonly patterns: readonly string[];
  /** BUILD_USER and BUILD_HOST of the workspace status; empty when the client sent none. */
  readonly user: string;
  readonly host: string;
  readonly buildToolVersion: string;
  readonly workspaceDirectory: string;
  /** From BuildStarted; the time the server first heard of it until then. */
  readonly startTimeMs: number;
  readonly finishTimeMs?: number;
  /** BuildFinished's exit code name (`SUCCESS`, `BUILD_FAILURE`, ...). */
  readonly exitCode?: string;
  readonly eventCount: number;
  readonly bytes: number;
  readonly targetCount: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * One invocation as the store holds it: the BEP events in sequence order (encoded as the client sent
 * them) and what has been read from them so far.
 */
export class Invocation {
  readonly events: Buffer[] = [];
  bytes = 0;
  /** The sequence number the tool event stream continues with (each OrderedBuildEvent counts, BEP or not). */
  nextSequence = 1;
  /** Streams of this invocation open now. */
  openStreams = 0;
  /** The stream sent component_stream_finished. */
  streamFinished = false;
  /** The lifecycle's InvocationAttemptFinished result, when it came (`COMMAND_SUCCEEDED`, ...). */
  attemptResult?: string;
  private readonly summary: Mutable<InvocationSummary>;
  private readonly targets = new Map<string, Mutable<InvocationTarget>>();
  private finished?: buildEventStream.BuildFinished;

  constructor(
    invocationId: string,
    buildId: string,
    instance: string,
    /** When the server first heard of it. */
    readonly createdMs: number,
  ) {
    const nowMs = createdMs;
    this.summary = {
      invocationId,
      buildId,
      instance,
      status: 'running',
      command: '',
      patterns: [],
      user: '',
      host: '',
      buildToolVersion: '',
      workspaceDirectory: '',
      startTimeMs: nowMs,
      eventCount: 0,
      bytes: 0,
      targetCount: 0,
    };
  }

  get id(): string {
    return this.summary.invocationId;
  }

  get buildId(): string {
    return this.summary.buildId;
  }

  get instance(): string {
    return this.summary.instance;
  }

  get status(): InvocationStatus {
    return this.summary.status;
  }

  /** Stores one BEP event (its bytes, which `event` was decoded from) and reads what the summary needs. */
  add(bytes: Buffer, event: buildEventStream.BuildEvent): void {
    this.events.push(bytes);
    this.bytes += bytes.length;
    this.read(event);
  }

  /** A stream of it opened: it is running (again, if it had broken). */
  streamOpened(): void {
    this.openStreams++;
    if (!this.streamFinished) this.summary.status = 'running';
  }

  /** A stream of it ended; `finished`: after component_stream_finished. */
  streamClosed(finished: boolean): void {
    this.openStreams = Math.max(0, this.openStreams - 1);
    if (finished) this.streamFinished = true;
    if (this.streamFinished) this.summary.status = this.finished ? (succeeded(this.finished) ? 'succeeded' : 'failed') : 'partial';
    else if (this.openStreams === 0) this.summary.status = 'partial';
  }

  /** Marks it partial, as after a restart of the server that kept it (its stream cannot continue where it was). */
  markPartial(): void {
    if (!this.streamFinished) this.summary.status = 'partial';
  }

  summaryNow(): InvocationSummary {
    return { ...this.summary, patterns: [...this.summary.patterns], eventCount: this.events.length, bytes: this.bytes, targetCount: this.targets.size };
  }

  targetList(): InvocationTarget[] {
    return [...this.targets.values()].map((t) => ({ ...t }));
  }

  private target(label: string): Mutable<InvocationTarget> {
    let t = this.targets.get(label);
    if (!t) this.targets.set(label, (t = { label }));
    return t;
  }

  private read(e: buildEventStream.BuildEvent): void {
    const s = this.summary;
    if (e.started) {
      s.command = e.started.command;
      s.buildToolVersion = e.started.buildToolVersion;
      s.workspaceDirectory = e.started.workspaceDirectory;
      const ms = timeMs(e.started.startTime, e.started.startTimeMillis);
      if (ms > 0) s.startTimeMs = ms;
    }
    if (e.id?.pattern && s.patterns.length === 0) s.patterns = [...e.id.pattern.pattern];
    if (e.workspaceStatus) {
      for (const item of e.workspaceStatus.item) {
        if (item.key === 'BUILD_USER') s.user = item.value;
        if (item.key === 'BUILD_HOST') s.host = item.value;
      }
    }
    if (e.id?.targetConfigured && e.configured) this.target(e.id.targetConfigured.label).kind = e.configured.targetKind;
    if (e.id?.targetCompleted && !e.id.targetCompleted.aspect) {
      this.target(e.id.targetCompleted.label).success = e.completed ? e.completed.success : false;
    }
    if (e.id?.testSummary && e.testSummary) {
      this.target(e.id.testSummary.label).testStatus = buildEventStream.TestStatus[e.testSummary.overallStatus] ?? String(e.testSummary.overallStatus);
    }
    if (e.finished) {
      this.finished = e.finished;
      const ms = timeMs(e.finished.finishTime, e.finished.finishTimeMillis);
      if (ms > 0) s.finishTimeMs = ms;
      if (e.finished.exitCode) s.exitCode = e.finished.exitCode.name;
    }
  }
}

/** A time of the BEP: the Timestamp of present-day Bazel, else the older milliseconds field; 0 when neither is usable. */
function timeMs(timestamp: wellKnown.Timestamp | null | undefined, millis: number): number {
  if (timestamp) {
    try {
      return msFromTimestamp(timestamp);
    } catch {
      return 0;
    }
  }
  return Number.isSafeInteger(millis) ? millis : 0;
}

/** A BuildFinished's verdict: its exit code when it has one (Bazel 0.25 on), else the older overall_success. */
function succeeded(finished: buildEventStream.BuildFinished): boolean {
  return finished.exitCode ? finished.exitCode.code === 0 : finished.overallSuccess;
}
