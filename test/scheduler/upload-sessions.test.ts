import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/index.js';
import { MemoryBlobAccess, VerifyingBlobAccess } from '../../src/core/blobstore/index.js';
import { AbortedError, UploadSessions } from '../../scheduler/upload-sessions.js';

describe('UploadSessions', () => {
  const data = Buffer.from('resumable upload content');
  const digest = digestOf(data);

  it('keeps a released session for a resume and discards it after the idle timeout (fake clock)', async () => {
    let now = 1_000;
    const cas = new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 1 << 20 }));
    const sessions = new UploadSessions(60_000, { now: () => now });
    try {
      const first = Symbol('first stream');
      const session = sessions.open('uploads/u/blobs/x', digest, cas);
      session.takeOver(first);
      await session.run(first, now, () => session.write(data.subarray(0, 10)));
      session.release(first);

      now += 59_000;
      await sessions.sweep();
      expect(sessions.get('uploads/u/blobs/x')?.committedBytes).toBe(10);

      now += 2_000;
      await sessions.sweep();
      expect(sessions.get('uploads/u/blobs/x')).toBeUndefined();
      expect(await cas.findMissing([digest])).toHaveLength(1);
    } finally {
      await sessions.closeAll();
    }
  });

  it('a stream that took over makes the old stream fail with ABORTED; the new one completes the blob', async () => {
    const cas = new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 1 << 20 }));
    const sessions = new UploadSessions(60_000, { now: () => 0 });
    try {
      const session = sessions.open('k', digest, cas);
      const old = Symbol('old');
      const next = Symbol('new');
      session.takeOver(old);
      await session.run(old, 0, () => session.write(data.subarray(0, 5)));
      session.takeOver(next);
      await expect(session.run(old, 0, () => session.write(data.subarray(5)))).rejects.toBeInstanceOf(AbortedError);
      await session.run(next, 0, async () => {
        await session.write(data.subarray(session.committedBytes));
        await session.commit();
      });
      expect(await cas.get(digest)).toEqual(data);
    } finally {
      await sessions.closeAll();
    }
  });

  it('keeps at most maxSessions, dropping the longest-idle unowned one first', async () => {
    let now = 0;
    const cas = new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 1 << 20 }));
    const sessions = new UploadSessions(60_000, { now: () => now }, 2);
    try {
      const writing = Symbol('writing');
      const a = sessions.open('a', digest, cas);
      a.takeOver(writing);
      now = 1;
      sessions.open('b', digest, cas);
      now = 2;
      sessions.open('c', digest, cas);
      // "a" is owned by a live stream, so "b" (idle, unowned) made room.
      expect(['a', 'b', 'c'].map((k) => sessions.get(k) !== undefined)).toEqual([true, false, true]);
    } finally {
      await sessions.closeAll();
    }
  });
});
