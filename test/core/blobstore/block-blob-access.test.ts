import { readdir, readFile, stat, writeFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError, ResourceExhaustedError } from '../../../src/core/index.js';
import { createBlobAccess, VerifyingBlobAccess } from '../../../src/core/blobstore/index.js';
import { BlockBlobAccess, type BlockBlobAccessOptions } from '../../../src/core/blobstore/index.js';
import { HEADER_BYTES, recordBytes } from '../../../src/core/blobstore/block-record.js';
import { blob, blobs, readAll, RecordingLogger, tempDir } from './fixtures.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function fresh(): Promise<string> {
  const dir = await tempDir();
  cleanups.push(dir.cleanup);
  return dir.path;
}

async function openStore(path: string, options: Partial<BlockBlobAccessOptions> = {}): Promise<BlockBlobAccess> {
  const store = await BlockBlobAccess.open({ path, maxBytes: 64 * 1024 * 1024, ...options });
  cleanups.unshift(() => store.close());
  return store;
}

async function blockFiles(path: string, keyspace = 'cas'): Promise<string[]> {
  return (await readdir(join(path, `${keyspace}-blocks`))).sort().map((n) => join(path, `${keyspace}-blocks`, n));
}

describe('BlockBlobAccess', () => {
  it('keeps many small blobs in a few block files', async () => {
    const path = await fresh();
    const store = await openStore(path, { blockSizeBytes: 256 * 1024 });
    const many = blobs(1000, 1024);
    await Promise.all(many.map((b) => store.put(b.digest, b.data)));
    expect(store.usage.blobs).toBe(1000);
    const files = await blockFiles(path);
    expect(files.length).toBeLessThanOrEqual(Math.ceil((1000 * recordBytes(1024)) / (256 * 1024)) + 1);
    for (const b of [many[0]!, many[500]!, many[999]!]) expect((await store.get(b.digest)).equals(b.data)).toBe(true);
  });

  it('reads the chunks into a scratch buffer when given one, each a view of it, in order', async () => {
    const store = await openStore(await fresh());
    const b = blob(Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251)));
    await store.put(b.digest, b.data);
    const scratch = Buffer.alloc(4096);
    const read = await store.read(b.digest, { chunkSizeBytes: 4096, scratch });
    const seen: Buffer[] = [];
    for await (const chunk of read.chunks) {
      expect(chunk.buffer).toBe(scratch.buffer);
      seen.push(Buffer.from(chunk)); // a copy: the next chunk reuses the memory
    }
    expect(Buffer.concat(seen).equals(b.data)).toBe(true);
    // Without one, each chunk has memory of its own (readers may keep them).
    const kept = [];
    for await (const chunk of (await store.read(b.digest, { chunkSizeBytes: 4096 })).chunks) kept.push(chunk);
    expect(Buffer.concat(kept).equals(b.data)).toBe(true);
  });

  it('keeps every blob, upload and deletion across a restart', async () => {
    const path = await fresh();
    const first = await openStore(path);
    const small = blobs(50, 700);
    await Promise.all(small.map((b) => first.put(b.digest, b.data)));
    const large = blob(Buffer.alloc(3 * 1024 * 1024, 'streamed upload '));
    const writer = await first.beginWrite(large.digest);
    for (let off = 0; off < large.data.length; off += 1024 * 1024) await writer.write(large.data.subarray(off, off + 1024 * 1024));
    await writer.commit();
    await first.delete(small[7]!.digest);
    await first.close();

    const second = await openStore(path);
    expect(second.usage.blobs).toBe(50);
    expect(await second.findMissing([...small, large].map((b) => b.digest))).toEqual([small[7]!.digest]);
    expect((await readAll(second, large.digest, { offset: 1024 * 1024 + 5, limit: 100 })).equals(large.data.subarray(1024 * 1024 + 5, 1024 * 1024 + 105))).toBe(
      true,
    );
    expect((await second.get(small[8]!.digest)).equals(small[8]!.data)).toBe(true);
  });

  it('on start, truncates a torn tail and never serves a torn record', async () => {
    const path = await fresh();
    const first = await openStore(path);
    const [a, b] = blobs(2, 5000);
    await first.put(a!.digest, a!.data);
    await first.put(b!.digest, b!.data);
    await first.close();
    // A crash in the middle of writing b: its record is cut short.
    const [file] = await blockFiles(path);
    const full = (await stat(file!)).size;
    expect(full).toBe(2 * recordBytes(5000));
    const handle = await open(file!, 'r+');
    await handle.truncate(full - 100);
    await handle.close();

    const logger = new RecordingLogger();
    const second = await openStore(path, { logger });
    expect(await second.findMissing([a!.digest, b!.digest])).toEqual([b!.digest]);
    expect((await second.get(a!.digest)).equals(a!.data)).toBe(true);
    expect((await stat(file!)).size).toBe(recordBytes(5000));
    expect(logger.warnings.join('\n')).toMatch(/not intact records; truncated/);
  });

  it('skips a record whose data does not match its checksum, and keeps the records after it', async () => {
    const path = await fresh();
    const first = await openStore(path);
    const [a, b, c] = blobs(3, 2000);
    await first.put(a!.digest, a!.data);
    await first.put(b!.digest, b!.data);
    await first.put(c!.digest, c!.data);
    await first.close();
    const [file] = await blockFiles(path);
    const content = await readFile(file!);
    content[recordBytes(2000) + HEADER_BYTES + 10]! ^= 0x40; // one bit of b's data, as a torn page would
    await writeFile(file!, content);

    const second = await openStore(path);
    expect(await second.findMissing([a!.digest, b!.digest, c!.digest])).toEqual([b!.digest]);
    expect((await second.get(c!.digest)).equals(c!.data)).toBe(true);
  });

  it('on start, steps over a stretch that never reached the disk and keeps the records after it', async () => {
    const path = await fresh();
    const first = await openStore(path);
    const [a, b, c] = blobs(3, 3000, 'gap');
    await first.put(a!.digest, a!.data);
    await first.put(b!.digest, b!.data);
    await first.put(c!.digest, c!.data);
    await first.close();
    // b's write was lost (a crash before it reached the disk) while c's, begun later, was not.
    const [file] = await blockFiles(path);
    const handle = await open(file!, 'r+');
    await handle.write(Buffer.alloc(recordBytes(3000)), 0, recordBytes(3000), recordBytes(3000));
    await handle.close();

    const logger = new RecordingLogger();
    const second = await openStore(path, { logger });
    expect(await second.findMissing([a!.digest, b!.digest, c!.digest])).toEqual([b!.digest]);
    expect((await second.get(c!.digest)).equals(c!.data)).toBe(true);
    expect(logger.warnings.join('\n')).toMatch(/not an intact record; skipped/);
    expect((await stat(file!)).size).toBe(3 * recordBytes(3000));
  });

  it('does not serve data changed on disk while running', async () => {
    const path = await fresh();
    const logger = new RecordingLogger();
    // Action cache values: checked against their record's CRC-32 on every get.
    const ac = await openStore(path, { logger, keyspace: 'ac' });
    const key = blob('an action').digest;
    await ac.put(key, Buffer.from('an action result'));
    const [acFile] = await blockFiles(path, 'ac');
    const handle = await open(acFile!, 'r+');
    await handle.write(Buffer.from('X'), 0, 1, HEADER_BYTES + 1);
    await handle.close();
    await expect(ac.get(key)).rejects.toBeInstanceOf(NotFoundError);
    expect(await ac.findMissing([key])).toEqual([key]);
    expect(logger.warnings.join('\n')).toMatch(/fails its checksum/);
    // CAS content: checked with SHA-256 by the verifying decorator, whole and streamed.
    const cas = new VerifyingBlobAccess(await openStore(path, { logger }), { wholeReadLimitBytes: 1024 });
    const small = blob(Buffer.alloc(800, 'small victim'));
    const large = blob(Buffer.alloc(5000, 'streamed victim'));
    await cas.put(small.digest, small.data);
    await cas.put(large.digest, large.data);
    const [casFile] = await blockFiles(path);
    const h2 = await open(casFile!, 'r+');
    await h2.write(Buffer.from('Y'), 0, 1, HEADER_BYTES + 3);
    await h2.write(Buffer.from('Y'), 0, 1, recordBytes(800) + HEADER_BYTES + 4000);
    await h2.close();
    await expect(cas.get(small.digest)).rejects.toBeInstanceOf(NotFoundError);
    await expect(cas.read(large.digest)).rejects.toBeInstanceOf(NotFoundError);
    expect(await cas.findMissing([small.digest, large.digest])).toEqual([small.digest, large.digest]);
  });

  it('an upload that never finishes is invisible, also after a restart, and later records survive', async () => {
    const path = await fresh();
    const first = await openStore(path);
    const pending = blob(Buffer.alloc(10_000, 'half'));
    const writer = await first.beginWrite(pending.digest);
    await writer.write(pending.data.subarray(0, 4000));
    const after = blob('written after the upload began');
    await first.put(after.digest, after.data);
    expect(await first.findMissing([pending.digest])).toEqual([pending.digest]);
    await first.close(); // the process dies with the upload open

    const second = await openStore(path);
    expect(await second.findMissing([pending.digest, after.digest])).toEqual([pending.digest]);
    expect((await second.get(after.digest)).toString()).toBe('written after the upload began');
  });

  it('rejects an upload of the wrong size and stores nothing', async () => {
    const store = await openStore(await fresh());
    const a = blob('exactly this');
    const writer = await store.beginWrite(a.digest);
    await expect(writer.write(Buffer.from('exactly this and more'))).rejects.toBeInstanceOf(InvalidArgumentError);
    await writer.write(Buffer.from('exactly'));
    await expect(writer.commit()).rejects.toBeInstanceOf(InvalidArgumentError);
    await writer.abort();
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
  });

  it('evicts the oldest block whole when over budget, counting every block byte', async () => {
    const path = await fresh();
    const blockSize = 64 * 1024;
    const store = await openStore(path, { maxBytes: 4 * blockSize + 4 * 4096, blockSizeBytes: blockSize });
    const many = blobs(400, 1000);
    for (const b of many) await store.put(b.digest, b.data);
    const files = await blockFiles(path);
    let onDisk = 0;
    for (const f of files) onDisk += (await stat(f)).size;
    expect(onDisk).toBeLessThanOrEqual(store.usage.bytes);
    expect(store.usage.bytes).toBeLessThanOrEqual(4 * blockSize + 4 * 4096);
    const missing = await store.findMissing(many.map((b) => b.digest));
    // The oldest blobs went, a block at a time; the newest are all there.
    expect(missing.length).toBeGreaterThan(0);
    expect(missing).toEqual(many.slice(0, missing.length).map((b) => b.digest));
    expect(store.usage.blobs).toBe(400 - missing.length);
  });

  it('copies blobs read from the oldest blocks forward, so that they survive eviction', async () => {
    const path = await fresh();
    const blockSize = 64 * 1024;
    const store = await openStore(path, { maxBytes: 8 * blockSize, blockSizeBytes: blockSize });
    const many = blobs(1000, 1000, 'r');
    const favourite = many[0]!;
    for (const b of many) {
      await store.put(b.digest, b.data);
      // Used all along: each use from an old block copies it to the newest.
      await store.get(favourite.digest);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await store.findMissing([favourite.digest, many[1]!.digest])).toEqual([many[1]!.digest]);
  });

  it('refuses a blob larger than its budget', async () => {
    const store = await openStore(await fresh(), { maxBytes: 100_000 });
    const big = blob(Buffer.alloc(200_000, 'z'));
    await expect(store.put(big.digest, big.data)).rejects.toBeInstanceOf(ResourceExhaustedError);
    await expect(store.beginWrite(big.digest)).rejects.toBeInstanceOf(ResourceExhaustedError);
  });

  it('lets concurrent puts of overlapping blobs all succeed, each stored once', async () => {
    const path = await fresh();
    const store = await openStore(path);
    const set = blobs(100, 3000, 'c');
    await Promise.all([...set, ...set, ...set].map((b) => store.put(b.digest, b.data)));
    expect(store.usage.blobs).toBe(100);
    for (const b of set) expect((await store.get(b.digest)).equals(b.data)).toBe(true);
  });

  it('as an action cache, keys by hash and lets a new value replace the old, also after restart', async () => {
    const path = await fresh();
    const first = await openStore(path, { keyspace: 'ac' });
    const key = blob('action').digest;
    await first.put(key, Buffer.from('first result'));
    await first.put(key, Buffer.from('second, longer result'));
    expect((await first.get(key)).toString()).toBe('second, longer result');
    const writer = await first.beginWrite(key);
    await writer.write(Buffer.from('third'));
    await writer.commit();
    await first.close();
    const second = await openStore(path, { keyspace: 'ac' });
    expect((await second.get(key)).toString()).toBe('third');
    // Opening creates no block file until something is written.
    expect(await blockFiles(path, 'ac')).toHaveLength(1);
  });

  it('is built by the factory from a "blocks" config', async () => {
    const path = await fresh();
    const store = await createBlobAccess({ kind: 'blocks', path, maxBytes: 1 << 20, blockSizeBytes: 1 << 16, sync: true });
    expect(store).toBeInstanceOf(BlockBlobAccess);
    cleanups.unshift(() => (store as BlockBlobAccess).close());
    const a = blob('synced');
    await store.put(a.digest, a.data);
    expect((await store.get(a.digest)).toString()).toBe('synced');
    await expect(createBlobAccess({ kind: 'blocks', path, maxBytes: 1, blockSizeBytes: 0 } as never)).rejects.toThrow(/storage\.blockSizeBytes/);
  });
});
