import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/core/index.js';
import { ChecksummingBlobAccess, MemoryBlobAccess } from '../../../src/core/blobstore/index.js';
import { blob, readAll, RecordingLogger } from './fixtures.js';

function stores() {
  const backend = new MemoryBlobAccess({ maxBytes: 1024 * 1024 });
  const logger = new RecordingLogger();
  return { backend, logger, store: new ChecksummingBlobAccess(backend, { logger }) };
}

describe('ChecksummingBlobAccess', () => {
  const key = blob('an action digest').digest;
  const value = Buffer.from('a serialized ActionResult');

  it('returns what was put, whole, ranged and through a streamed upload', async () => {
    const { store } = stores();
    await store.put(key, value);
    expect((await store.get(key)).equals(value)).toBe(true);
    expect((await readAll(store, key, { offset: 2, limit: 5, chunkSizeBytes: 2 })).toString()).toBe(value.subarray(2, 7).toString());
    const other = blob('another action').digest;
    const writer = await store.beginWrite(other);
    await writer.write(value.subarray(0, 4));
    await writer.write(value.subarray(4));
    await writer.commit();
    expect((await store.get(other)).equals(value)).toBe(true);
    expect(await store.findMissing([key, other, blob('none').digest])).toEqual([blob('none').digest]);
  });

  it.each([
    ['one changed byte', (stored: Buffer) => Buffer.concat([Buffer.from([stored[0]! ^ 1]), stored.subarray(1)])],
    ['a truncated file', (stored: Buffer) => stored.subarray(0, stored.length - 1)],
    ['a bare value without trailer (another format)', () => Buffer.from('a serialized ActionResult')],
    ['an empty file', () => Buffer.alloc(0)],
  ])('drops %s, reports a miss and warns', async (_name, corrupt) => {
    const { backend, logger, store } = stores();
    await store.put(key, value);
    const stored = await backend.get(key);
    await backend.delete(key);
    await backend.put(key, corrupt(Buffer.from(stored)));
    await expect(store.get(key)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.read(key)).rejects.toBeInstanceOf(NotFoundError);
    expect(await backend.findMissing([key])).toEqual([key]);
    expect(logger.warnings.join('\n')).toContain('fails its checksum; dropped');
  });
});
