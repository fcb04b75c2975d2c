import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError, OutOfRangeError } from '../../../src/core/index.js';
import {
  DiskBlobAccess,
  ExistenceCachingBlobAccess,
  MemoryBlobAccess,
  MirroredBlobAccess,
  ShardingBlobAccess,
  VerifyingBlobAccess,
  type BlobAccess,
} from '../../../src/core/blobstore/index.js';
import { BlockBlobAccess } from '../../../src/core/blobstore/index.js';
import { blob, blobs, FakeClock, readAll, tempDir } from './fixtures.js';

// Every BlobAccess, plain or decorated, must behave the same for correct use.
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function disk(): Promise<DiskBlobAccess> {
  const dir = await tempDir();
  cleanups.push(dir.cleanup);
  return DiskBlobAccess.open({ path: dir.path, maxBytes: 64 * 1024 * 1024 });
}

async function blocks(): Promise<BlockBlobAccess> {
  const dir = await tempDir();
  const store = await BlockBlobAccess.open({ path: dir.path, maxBytes: 64 * 1024 * 1024 });
  cleanups.push(async () => {
    await store.close();
    await dir.cleanup();
  });
  return store;
}

const stores: [string, () => Promise<BlobAccess>][] = [
  ['memory', async () => new MemoryBlobAccess({ maxBytes: 64 * 1024 * 1024 })],
  ['disk', disk],
  ['blocks', blocks],
  ['verifying(blocks) with streamed checks', async () => new VerifyingBlobAccess(await blocks(), { wholeReadLimitBytes: 1024 })],
  ['verifying(memory)', async () => new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 64 * 1024 * 1024 }))],
  ['verifying(disk) with streamed checks', async () => new VerifyingBlobAccess(await disk(), { wholeReadLimitBytes: 1024 })],
  [
    'existence-caching(verifying(disk))',
    async () => new ExistenceCachingBlobAccess(new VerifyingBlobAccess(await disk()), { ttlMs: 1000, clock: new FakeClock() }),
  ],
  [
    'sharding(memory x3)',
    async () =>
      new ShardingBlobAccess(['x', 'y', 'z'].map((name, i) => ({ name, weight: i + 1, backend: new MemoryBlobAccess({ maxBytes: 64 * 1024 * 1024 }) }))),
  ],
  [
    'mirrored(verifying(memory), verifying(disk))',
    async () => new MirroredBlobAccess(new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 64 * 1024 * 1024 })), new VerifyingBlobAccess(await disk())),
  ],
];

describe.each(stores)('BlobAccess contract: %s', (_name, make) => {
  it('stores and returns blobs, and knows which are missing', async () => {
    const store = await make();
    const [a, b, c] = blobs(3, 3000);
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    expect((await store.get(a!.digest)).equals(a!.data)).toBe(true);
    expect(await store.findMissing([a!.digest, c!.digest, b!.digest])).toEqual([c!.digest]);
    await expect(store.get(c!.digest)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.read(c!.digest)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('treats a put of a stored blob as a no-op success', async () => {
    const store = await make();
    const a = blob('same content');
    await store.put(a.digest, a.data);
    await store.put(a.digest, Buffer.from(a.data));
    expect((await store.get(a.digest)).toString()).toBe('same content');
  });

  it('deletes blobs, and deleting a missing blob is fine', async () => {
    const store = await make();
    const a = blob('to delete');
    await store.put(a.digest, a.data);
    await store.delete(a.digest);
    await store.delete(a.digest);
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
    await expect(store.get(a.digest)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reads ranges in chunks', async () => {
    const store = await make();
    const data = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
    const a = blob(data);
    await store.put(a.digest, a.data);
    expect((await readAll(store, a.digest)).equals(data)).toBe(true);
    expect((await readAll(store, a.digest, { offset: 100, limit: 50 })).equals(data.subarray(100, 150))).toBe(true);
    expect((await readAll(store, a.digest, { offset: 9_990, limit: 50 })).equals(data.subarray(9_990))).toBe(true);
    expect((await readAll(store, a.digest, { offset: 10_000 })).length).toBe(0);
    const read = await store.read(a.digest, { offset: 1, chunkSizeBytes: 4096 });
    expect(read.sizeBytes).toBe(10_000);
    const sizes: number[] = [];
    for await (const chunk of read.chunks) sizes.push(chunk.length);
    expect(sizes).toEqual([4096, 4096, 1807]);
  });

  it('rejects bad ranges before reading', async () => {
    const store = await make();
    const a = blob('0123456789');
    await store.put(a.digest, a.data);
    await expect(store.read(a.digest, { offset: 11 })).rejects.toBeInstanceOf(OutOfRangeError);
    await expect(store.read(a.digest, { offset: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(store.read(a.digest, { limit: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('stops a read early without trouble', async () => {
    const store = await make();
    const a = blob(Buffer.alloc(50_000, 'x'));
    await store.put(a.digest, a.data);
    const read = await store.read(a.digest, { chunkSizeBytes: 1000 });
    for await (const chunk of read.chunks) {
      expect(chunk.length).toBe(1000);
      break;
    }
    expect((await store.get(a.digest)).length).toBe(50_000);
  });

  it('uploads in chunks, visible only after commit', async () => {
    const store = await make();
    const data = Buffer.alloc(100_000, 'chunked upload ');
    const a = blob(data);
    const writer = await store.beginWrite(a.digest);
    await writer.write(data.subarray(0, 30_000));
    expect(writer.writtenBytes).toBe(30_000);
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
    await writer.write(data.subarray(30_000));
    expect(writer.writtenBytes).toBe(100_000);
    await writer.commit();
    expect((await store.get(a.digest)).equals(data)).toBe(true);
  });

  it('discards an aborted upload', async () => {
    const store = await make();
    const a = blob('never committed');
    const writer = await store.beginWrite(a.digest);
    await writer.write(a.data);
    await writer.abort();
    await writer.abort();
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
  });
});
