import { buildEventStream, InvalidArgumentError, ResourceExhaustedError } from '../../src/core/index.js';
import { quotedName } from '../instance-name.js';
import type { BuildEventsConfig } from './build-events-config.js';
import { Invocation } from './invocation.js';

/** What the store is told of an invocation's changes, to keep them elsewhere too (build-event-files.ts). */
export interface InvocationJournal {
  created(invocation: Invocation): void;
  appended(invocation: Invocation, bytes: Buffer): void;
  statusChanged(invocation: Invocation): void;
  removed(invocationId: string): void;
}

/** Invocation ids name folders when kept on disk; Bazel's are UUIDs. */
const INVOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Ids of dropped invocations remembered, so a late event for one is refused rather than starting it anew. */
const DROPPED_REMEMBERED = 4096;

/**
 * The invocations the Build Event Service keeps, in memory, bounded by count and bytes
 * (BuildEventsConfig). Past `maxInvocations` or `maxTotalBytes` the oldest invocations that are no
 * longer streaming are dropped; when only streaming ones are left, the new one is refused
 * RESOURCE_EXHAUSTED. One invocation past its own event or byte limit is refused RESOURCE_EXHAUSTED
 * (its stream then ends, and it is `partial`), so one client's flood is never stored without bound.
 */
export class BuildEventStore {
  /** In the order they were created: the oldest first. */
  private readonly invocations = new Map<string, Invocation>();
  private readonly dropped = new Set<string>();
  private totalBytes = 0;

  constructor(
    readonly limits: BuildEventsConfig,
    private readonly journal?: InvocationJournal,
    private readonly retryAfterMs = 1000,
  ) {}

  /** The invocation with this id, created when new (its stream or lifecycle event is the first word of it). */
  open(invocationId: string, buildId: string, instance: string, nowMs: number): Invocation {
    if (!INVOCATION_ID.test(invocationId)) {
      throw new InvalidArgumentError(`stream_id.invocation_id ${quotedName(invocationId)} must be 1 to 128 letters, digits, '.', '_' or '-'`);
    }
    const known = this.invocations.get(invocationId);
    if (known) {
      if (known.instance !== instance) throw new InvalidArgumentError(`invocation ${quotedName(invocationId)} was published to another instance`);
      return known;
    }
    if (this.dropped.has(invocationId)) {
      throw new ResourceExhaustedError(`invocation ${quotedName(invocationId)} was dropped to keep the build event store within its bounds`, this.retryAfterMs);
    }
    this.makeRoom(this.limits.maxInvocations - 1, this.limits.maxTotalBytes, undefined);
    if (this.invocations.size >= this.limits.maxInvocations) {
      throw new ResourceExhaustedError(
        `the build event store holds ${this.invocations.size} invocations, all still streaming (buildEvents.maxInvocations)`,
        this.retryAfterMs,
      );
    }
    const invocation = new Invocation(invocationId, buildId, instance, nowMs);
    this.invocations.set(invocationId, invocation);
    this.journal?.created(invocation);
    return invocation;
  }

  /** Adds an invocation read back from disk at start-up, oldest first. */
  restore(invocation: Invocation): void {
    this.invocations.set(invocation.id, invocation);
    this.totalBytes += invocation.bytes;
    this.makeRoom(this.limits.maxInvocations, this.limits.maxTotalBytes, undefined);
  }

  /**
   * Stores the BEP event `bytes` (a build_event_stream.BuildEvent) as the invocation's next one.
   * @throws ResourceExhaustedError past the invocation's limits, or when the store cannot make room
   * @throws InvalidArgumentError when `bytes` is not a BuildEvent
   */
  append(invocation: Invocation, bytes: Uint8Array): void {
    const { maxEventsPerInvocation, maxBytesPerInvocation, maxTotalBytes } = this.limits;
    const name = quotedName(invocation.id);
    if (invocation.events.length + 1 > maxEventsPerInvocation) {
      throw new ResourceExhaustedError(
        `invocation ${name} has ${invocation.events.length} build events, the most one may store (buildEvents.maxEventsPerInvocation)`,
        this.retryAfterMs,
      );
    }
    if (invocation.bytes + bytes.length > maxBytesPerInvocation) {
      throw new ResourceExhaustedError(
        `invocation ${name} would exceed ${maxBytesPerInvocation} bytes of build events (buildEvents.maxBytesPerInvocation)`,
        this.retryAfterMs,
      );
    }
    let event: buildEventStream.BuildEvent;
    try {
      event = buildEventStream.BuildEvent.decode(bytes);
    } catch (e) {
      throw new InvalidArgumentError(`bazel_event is not a build_event_stream.BuildEvent: ${(e as Error).message}`);
    }
    this.makeRoom(this.limits.maxInvocations, maxTotalBytes - bytes.length, invocation);
    if (this.totalBytes + bytes.length > maxTotalBytes) {
      throw new ResourceExhaustedError(`the build event store is full of invocations still streaming (buildEvents.maxTotalBytes)`, this.retryAfterMs);
    }
    // A copy: the request's buffer holds the whole message, and may be larger than the event.
    const own = Buffer.from(bytes);
    invocation.add(own, event);
    this.totalBytes += own.length;
    this.journal?.appended(invocation, own);
  }

  streamOpened(invocation: Invocation): void {
    invocation.streamOpened();
    this.journal?.statusChanged(invocation);
  }

  streamClosed(invocation: Invocation, finished: boolean): void {
    invocation.streamClosed(finished);
    // A dropped invocation's stream may end after it went.
    if (this.invocations.get(invocation.id) === invocation) this.journal?.statusChanged(invocation);
  }

  /** The lifecycle's InvocationAttemptFinished: its result is noted, and a stream that never finished will not now. */
  attemptFinished(invocation: Invocation, result: string): void {
    invocation.attemptResult = result;
    if (!invocation.streamFinished && invocation.openStreams === 0) invocation.markPartial();
    this.journal?.statusChanged(invocation);
  }

  get(invocationId: string): Invocation | undefined {
    return this.invocations.get(invocationId);
  }

  /** Every invocation, the newest (by start time) first. */
  newestFirst(): Invocation[] {
    return [...this.invocations.values()].reverse().sort((a, b) => b.summaryNow().startTimeMs - a.summaryNow().startTimeMs);
  }

  get size(): number {
    return this.invocations.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Drops the oldest invocations no longer streaming (never `keep`) until at most `count` and `bytes` remain. */
  private makeRoom(count: number, bytes: number, keep: Invocation | undefined): void {
    // Finished and partial ones first, then running ones with no stream open (announced by a lifecycle
    // event, or whose client went quiet).
    for (const pass of ['ended', 'idle'] as const) {
      for (const invocation of this.invocations.values()) {
        if (this.invocations.size <= count && this.totalBytes <= bytes) return;
        if (invocation === keep || invocation.openStreams > 0 || (pass === 'ended' && invocation.status === 'running')) continue;
        this.drop(invocation);
      }
    }
  }

  private drop(invocation: Invocation): void {
    this.invocations.delete(invocation.id);
    this.totalBytes -= invocation.bytes;
    this.dropped.add(invocation.id);
    if (this.dropped.size > DROPPED_REMEMBERED) this.dropped.delete(this.dropped.values().next().value as string);
    this.journal?.removed(invocation.id);
  }
}
