import { describe, expect, it } from 'vitest';
import { BuildEventStream, type BuildEventTransport } from '../../../src/build/records/build-event-stream.js';
import type { buildEventStream } from '../../../src/core/index.js';

type Event = buildEventStream.BuildEventInit;

/** A transport that keeps what it got, and the exit code it was closed with. */
function recording(): BuildEventTransport & { events: Event[]; closedWith?: number | undefined } {
  const t = {
    events: [] as Event[],
    closedWith: undefined as number | undefined,
    write: (e: Event) => void t.events.push(e),
    close: async (code?: number) => {
      t.closedWith = code;
    },
  };
  return t;
}

describe('BuildEventStream (Bazel’s BuildEventStreamer announcements)', () => {
  it('announces an event nobody announced through a progress event, chained to the next one', async () => {
    const t = recording();
    const stream = new BuildEventStream([t]);
    stream.post({ id: { started: {} }, children: [{ progress: {} }, { buildFinished: {} }], started: {} });
    stream.post({ id: { workspace: {} }, workspaceInfo: {} });
    stream.post({ id: { buildFinished: {} }, finished: {} });
    await stream.close(3);
    expect(t.events.map((e) => Object.keys(e.id!)[0])).toEqual(['started', 'progress', 'workspace', 'buildFinished', 'progress']);
    expect(t.events[1]!.children).toEqual([{ progress: { opaqueCount: 1 } }, { workspace: {} }]);
    // The announced event came without a progress event before it; the last one says it is the last.
    expect(t.events.at(-1)).toMatchObject({ id: { progress: { opaqueCount: 1 } }, children: [], lastMessage: true });
    expect(t.closedWith).toBe(3);
  });

  it('posts an id once and lists what was announced and never posted', () => {
    const t = recording();
    const stream = new BuildEventStream([t]);
    stream.post({ id: { started: {} }, children: [{ pattern: { pattern: ['//x'] } }, { buildFinished: {} }], started: {} });
    stream.post({ id: { pattern: { pattern: ['//x'] } }, children: [{ targetConfigured: { label: '//x' } }], expanded: {} });
    stream.post({ id: { pattern: { pattern: ['//x'] } }, expanded: {} });
    expect(t.events).toHaveLength(2);
    expect(stream.pending()).toEqual([{ buildFinished: {} }, { targetConfigured: { label: '//x' } }]);
  });
});
