import { describe, expect, it } from 'vitest';
import { NotFoundError, type Digest } from '../../../src/core/index.js';
import {
  ExistenceCachingBlobAccess,
  MemoryBlobAccess,
  type BlobAccess,
  type BlobRead,
  type BlobWriter,
  type ReadRange,
} from '../../../src/core/blobstore/index.js';
import { blob, blobs, FakeClock } from './fixtures.js';

/** A real store that counts how many digests it was asked about. */
class CountingBlobAccess implements BlobAccess {
  asked = 0;
  constructor(readonly inner: BlobAccess) {}
  get(d: Digest): Promise<Buffer> {
    return this.inner.get(d);
  }
  read(d: Digest, r?: ReadRange): Promise<BlobRead> {
    return this.inner.read(d, r);
  }
  put(d: Digest, data: Buffer): Promise<void> {
    return this.inner.put(d, data);
  }
  beginWrite(d: Digest): Promise<BlobWriter> {
    return this.inner.beginWrite(d);
  }
  findMissing(ds: readonly Digest[]): Promise<Digest[]> {
    this.asked += ds.length;
    return this.inner.findMissing(ds);
  }
  delete(d: Digest): Promise<void> {
    return this.inner.delete(d);
  }
}

function setup(maxEntries?: number) {
  const clock = new FakeClock();
  const backend = new CountingBlobAccess(new MemoryBlobAccess({ maxBytes: 1 << 20 }));
  const store = new ExistenceCachingBlobAccess(backend, { ttlMs: 10_000, clock, ...(maxEntries ? { maxEntries } : {}) });
  return { clock, backend, store };
}

describe('ExistenceCachingBlobAccess', () => {
  it('answers repeated questions about present blobs from its cache until the TTL passes', async () => {
    const { clock, backend, store } = setup();
    const [a, b] = blobs(2, 100);
    await store.put(a!.digest, a!.data);
    expect(await store.findMissing([a!.digest, b!.digest])).toEqual([b!.digest]);
    expect(backend.asked).toBe(2);

    clock.advance(9_999);
    expect(await store.findMissing([a!.digest])).toEqual([]);
    expect(backend.asked).toBe(2);

    clock.advance(1);
    expect(await store.findMissing([a!.digest])).toEqual([]);
    expect(backend.asked).toBe(3);
  });

  it('never caches a missing answer, so an upload shows at once', async () => {
    const { backend, store } = setup();
    const a = blob('uploaded later');
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
    await store.put(a.digest, a.data);
    expect(await store.findMissing([a.digest])).toEqual([]);
    expect(backend.asked).toBe(2);
  });

  it('forgets a blob that turns out to be gone, or is deleted', async () => {
    const { backend, store } = setup();
    const [a, b] = blobs(2, 100);
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    expect(await store.findMissing([a!.digest, b!.digest])).toEqual([]);

    await backend.inner.delete(a!.digest); // evicted below the cache
    await expect(store.get(a!.digest)).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.findMissing([a!.digest])).toEqual([a!.digest]);

    await store.delete(b!.digest);
    expect(await store.findMissing([b!.digest])).toEqual([b!.digest]);
  });

  it('remembers at most maxEntries digests', async () => {
    const { backend, store } = setup(2);
    const all = blobs(3, 10);
    for (const b of all) await store.put(b.digest, b.data);
    await store.findMissing(all.map((b) => b.digest));
    const before = backend.asked;
    await store.findMissing(all.map((b) => b.digest));
    expect(backend.asked - before).toBe(1);
  });
});
