import { describe, expect, it } from 'vitest';
import { NotFoundError, ResourceExhaustedError } from '../../../src/core/index.js';
import { MemoryBlobAccess } from '../../../src/core/blobstore/index.js';
import { blob, blobs } from './fixtures.js';

describe('MemoryBlobAccess', () => {
  it('evicts least recently used blobs by bytes', async () => {
    const [a, b, c, d] = blobs(4, 10_000);
    // Three blobs fit (with the per-entry overhead), four do not.
    const store = new MemoryBlobAccess({ maxBytes: 3 * 10_000 + 3 * 128 });
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    await store.put(c!.digest, c!.data);
    await store.get(a!.digest);
    await store.put(d!.digest, d!.data);
    expect(await store.findMissing([a!.digest, b!.digest, c!.digest, d!.digest])).toEqual([b!.digest]);
    expect(store.usage).toEqual({ blobs: 3, bytes: 3 * (10_000 + 128) });
  });

  it('counts findMissing as a use', async () => {
    const [a, b, c] = blobs(3, 1000);
    const store = new MemoryBlobAccess({ maxBytes: 2 * 1128 });
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    await store.findMissing([a!.digest]);
    await store.put(c!.digest, c!.data);
    await expect(store.get(b!.digest)).rejects.toBeInstanceOf(NotFoundError);
    expect((await store.get(a!.digest)).equals(a!.data)).toBe(true);
  });

  it('charges many tiny blobs their overhead, so they cannot grow without bound', async () => {
    const store = new MemoryBlobAccess({ maxBytes: 10 * 128 });
    for (let i = 0; i < 50; i++) {
      const b = blob(Buffer.from([i]));
      await store.put(b.digest, b.data);
    }
    expect(store.usage.blobs).toBeLessThanOrEqual(10);
  });

  it('refuses a blob larger than its budget, before buffering an upload of it', async () => {
    const store = new MemoryBlobAccess({ maxBytes: 1000 });
    const a = blob(Buffer.alloc(2000, 'x'));
    await expect(store.put(a.digest, a.data)).rejects.toBeInstanceOf(ResourceExhaustedError);
    await expect(store.beginWrite(a.digest)).rejects.toBeInstanceOf(ResourceExhaustedError);
    // A digest that understates the size is caught while the bytes arrive.
    const writer = await store.beginWrite({ ...a.digest, sizeBytes: 10 });
    await writer.write(a.data.subarray(0, 800));
    await expect(writer.write(a.data.subarray(800, 1600))).rejects.toBeInstanceOf(ResourceExhaustedError);
    expect(store.usage.blobs).toBe(0);
  });

  it('does not pin the larger buffer a blob was sliced from', async () => {
    const store = new MemoryBlobAccess({ maxBytes: 1 << 20 });
    const message = Buffer.alloc(512 * 1024, 'm');
    const data = message.subarray(100, 200);
    const b = blob(Buffer.from(data));
    await store.put(b.digest, data);
    const kept = await store.get(b.digest);
    expect(kept.equals(data)).toBe(true);
    expect(kept.buffer.byteLength).toBeLessThan(message.length);
  });
});
