import { buildEventStream } from '../../src/core/index.js';
import type { BuildEventStore } from './build-event-store.js';
import type { InvocationStatus, InvocationSummary, InvocationTarget } from './invocation.js';

/**
 * Who is asking: an invocation is visible to those allowed to read its instance (the `read`
 * permission of cache-reader and every role above it). `everyone` when auth is off.
 */
export interface InvocationViewer {
  mayRead(instance: string): boolean;
}

export const EVERYONE: InvocationViewer = { mayRead: () => true };

/** What to list; every field narrows. Text fields match a part, case-insensitively. */
export interface InvocationFilter {
  readonly user?: string;
  readonly host?: string;
  /** Matches a part of any of the invocation's target patterns. */
  readonly pattern?: string;
  readonly command?: string;
  readonly status?: InvocationStatus;
  readonly instance?: string;
  /** At most this many (the newest). */
  readonly limit?: number;
}

export interface InvocationDetails {
  readonly summary: InvocationSummary;
  readonly targets: readonly InvocationTarget[];
  /** The lifecycle's InvocationAttemptFinished result, when it came. */
  readonly attemptResult?: string;
}

/** The read side of the Build Event Service's store, for the UI and tools: nothing here changes it. */
export class BuildEventQueries {
  constructor(private readonly store: BuildEventStore) {}

  /** The invocations `viewer` may see, newest first. */
  list(viewer: InvocationViewer, filter: InvocationFilter = {}): InvocationSummary[] {
    const has = (value: string, part: string | undefined) => part === undefined || value.toLowerCase().includes(part.toLowerCase());
    const out: InvocationSummary[] = [];
    for (const invocation of this.store.newestFirst()) {
      if (!viewer.mayRead(invocation.instance)) continue;
      const s = invocation.summaryNow();
      if (filter.status !== undefined && s.status !== filter.status) continue;
      if (filter.instance !== undefined && s.instance !== filter.instance) continue;
      if (!has(s.user, filter.user) || !has(s.host, filter.host) || !has(s.command, filter.command)) continue;
      if (filter.pattern !== undefined && !s.patterns.some((p) => has(p, filter.pattern))) continue;
      out.push(s);
      if (filter.limit !== undefined && out.length >= filter.limit) break;
    }
    return out;
  }

  /** One invocation's summary and targets; undefined when it is unknown or `viewer` may not see it (the same answer). */
  get(viewer: InvocationViewer, invocationId: string): InvocationDetails | undefined {
    const invocation = this.store.get(invocationId);
    if (!invocation || !viewer.mayRead(invocation.instance)) return undefined;
    return {
      summary: invocation.summaryNow(),
      targets: invocation.targetList(),
      ...(invocation.attemptResult === undefined ? {} : { attemptResult: invocation.attemptResult }),
    };
  }

  /** One invocation's BEP events in order, decoded (from `offset`, for a page that follows a running build). */
  events(viewer: InvocationViewer, invocationId: string, offset = 0): buildEventStream.BuildEvent[] | undefined {
    const raw = this.rawEvents(viewer, invocationId, offset);
    return raw?.map((bytes) => buildEventStream.BuildEvent.decode(bytes));
  }

  /** The events as the client sent them (each an encoded build_event_stream.BuildEvent). */
  rawEvents(viewer: InvocationViewer, invocationId: string, offset = 0): Buffer[] | undefined {
    const invocation = this.store.get(invocationId);
    if (!invocation || !viewer.mayRead(invocation.instance)) return undefined;
    return invocation.events.slice(offset);
  }
}
