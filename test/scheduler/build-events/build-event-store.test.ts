import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildEventStream, InvalidArgumentError, ResourceExhaustedError } from '../../../src/core/index.js';
import { BuildEventQueries, BuildEventStore, DEFAULT_BUILD_EVENTS, EVERYONE } from '../../../scheduler/build-events/index.js';

const started = (command: string, ms: number) =>
  buildEventStream.BuildEvent.encode({ id: { started: {} }, started: { uuid: 'u', command, startTimeMillis: ms, buildToolVersion: 't' } });

describe('BuildEventStore', () => {
  it('takes any bytes a client sends as an event, or refuses them cleanly, and keeps its accounts right', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 256 }), { maxLength: 40 }), (events) => {
        const store = new BuildEventStore({ ...DEFAULT_BUILD_EVENTS, maxEventsPerInvocation: 30, maxBytesPerInvocation: 4000, maxTotalBytes: 4000 });
        const invocation = store.open('fuzz', 'b', '', 1);
        store.streamOpened(invocation);
        let bytes = 0;
        for (const event of events) {
          try {
            store.append(invocation, event);
            bytes += event.length;
          } catch (e) {
            expect(e instanceof InvalidArgumentError || e instanceof ResourceExhaustedError, String(e)).toBe(true);
          }
        }
        store.streamClosed(invocation, false);
        const summary = new BuildEventQueries(store).get(EVERYONE, 'fuzz')!.summary;
        expect([summary.bytes, store.bytes, summary.status]).toEqual([bytes, bytes, 'partial']);
        expect(summary.eventCount).toBeLessThanOrEqual(30);
      }),
    );
  });

  it('lists the newest first by start time and filters by parts of fields', () => {
    const store = new BuildEventStore(DEFAULT_BUILD_EVENTS);
    for (const [id, command, ms] of [
      ['a', 'build', 3000],
      ['b', 'test', 1000],
      ['c', 'build', 2000],
    ] as const) {
      const inv = store.open(id, 'b', '', 0);
      store.append(inv, started(command, ms));
    }
    const queries = new BuildEventQueries(store);
    expect(queries.list(EVERYONE).map((s) => s.invocationId)).toEqual(['a', 'c', 'b']);
    expect(queries.list(EVERYONE, { command: 'TES' }).map((s) => s.invocationId)).toEqual(['b']);
    expect(queries.list(EVERYONE, { limit: 2 }).map((s) => s.invocationId)).toEqual(['a', 'c']);
    expect(queries.list({ mayRead: (i) => i !== '' })).toEqual([]);
    expect(queries.events(EVERYONE, 'a')![0]!.started!.command).toBe('build');
    expect(queries.get(EVERYONE, 'nope')).toBeUndefined();
  });

  it('takes a malformed Timestamp in a valid event without failing the stream', () => {
    const store = new BuildEventStore(DEFAULT_BUILD_EVENTS);
    const inv = store.open('t', 'b', '', 5);
    store.append(inv, buildEventStream.BuildEvent.encode({ id: { started: {} }, started: { command: 'build', startTime: { seconds: 1, nanos: -5 } } }));
    expect(inv.summaryNow()).toMatchObject({ command: 'build', startTimeMs: 5, eventCount: 1 });
  });
});
