import { lstat, mkdir, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotFoundError, ResourceExhaustedError, type Digest } from '../../../src/core/index.js';
import { DiskBlobAccess, diskUsageOf } from '../../../src/core/blobstore/index.js';
import { blob, blobs, RecordingLogger, tempDir } from './fixtures.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function root(): Promise<string> {
  const dir = await tempDir();
  cleanup = dir.cleanup;
  return dir.path;
}

const fileOf = (path: string, d: Digest, keyspace = 'cas') => join(path, keyspace, d.hash.slice(0, 2), d.hash);

/** Every blob file under a keyspace, with its size. */
async function filesOnDisk(path: string, keyspace = 'cas'): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const sub of await readdir(join(path, keyspace))) {
    for (const name of await readdir(join(path, keyspace, sub))) out.set(name, (await stat(join(path, keyspace, sub, name))).size);
  }
  return out;
}

describe('DiskBlobAccess', () => {
  it('stores blobs as cas/<2 hex>/<hash>, the disk cache layout', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
    const a = blob('layout');
    await store.put(a.digest, a.data);
    expect((await readFile(fileOf(path, a.digest))).toString()).toBe('layout');
    expect(await readdir(join(path, 'cas', 'tmp'))).toEqual([]);
  });

  it("replaces a file found under a blob's name that is not that blob (truncated, planted), when the blob is stored", async () => {
    const path = await root();
    const a = blob('the whole blob');
    await mkdir(join(path, 'cas', a.digest.hash.slice(0, 2)), { recursive: true });
    await writeFile(fileOf(path, a.digest), 'the wh');
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
    expect(await store.findMissing([a.digest])).toEqual([a.digest]);
    await store.put(a.digest, a.data);
    expect((await readFile(fileOf(path, a.digest))).toString()).toBe('the whole blob');
    expect((await store.get(a.digest)).equals(a.data)).toBe(true);
    // A writer that streams takes the same path.
    await writeFile(fileOf(path, a.digest), 'planted bytes!');
    const w = await (await DiskBlobAccess.open({ path, maxBytes: 1 << 20 })).beginWrite(a.digest);
    await w.write(a.data);
    await w.commit();
    expect((await readFile(fileOf(path, a.digest))).toString()).toBe('the whole blob');
  });

  it('keeps every blob across a restart and rebuilds the same index', async () => {
    const path = await root();
    const first = await DiskBlobAccess.open({ path, maxBytes: 64 << 20 });
    const all = [...blobs(40, 1000), ...blobs(10, 70_000, 'big'), blob('')];
    for (const b of all.slice(0, 30)) await first.put(b.digest, b.data);
    for (const b of all.slice(30)) {
      const w = await first.beginWrite(b.digest);
      await w.write(b.data);
      await w.commit();
    }
    const before = first.usage;

    const second = await DiskBlobAccess.open({ path, maxBytes: 64 << 20 });
    expect(second.usage).toEqual(before);
    expect(second.usage.blobs).toBe(all.length);
    expect(await second.findMissing(all.map((b) => b.digest))).toEqual([]);
    for (const b of all) expect((await second.get(b.digest)).equals(b.data)).toBe(true);
  });

  it('deletes temp files left by a crash and stray files on start', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
    const a = blob('kept');
    await store.put(a.digest, a.data);
    // A crash mid-upload leaves a temp file; junk can appear in the tree.
    await writeFile(join(path, 'cas', 'tmp', 'crashed-upload'), Buffer.alloc(5000));
    await writeFile(join(path, 'cas', 'ab', 'not-a-blob'), 'junk');
    await writeFile(join(path, 'cas', 'ab', 'cd'.repeat(32)), 'wrong prefix directory');
    await mkdir(join(path, 'cas', 'ab', 'a-directory'));
    const logger = new RecordingLogger();

    const reopened = await DiskBlobAccess.open({ path, maxBytes: 1 << 20, logger });
    expect(await readdir(join(path, 'cas', 'tmp'))).toEqual([]);
    expect([...(await filesOnDisk(path)).keys()]).toEqual([a.digest.hash]);
    expect(reopened.usage).toEqual({ blobs: 1, bytes: diskUsageOf(4) });
    expect(logger.warnings).toHaveLength(3);
  });

  it('replaces a symlinked keyspace or prefix directory and a symlinked blob file on start, never writing or reading through them', async () => {
    const path = await root();
    const outside = join(path, '..', `${path.split('/').at(-1)}-outside`);
    await mkdir(outside);
    try {
      const a = blob('through a link');
      const prefix = a.digest.hash.slice(0, 2);
      // The action cache keyspace itself, and one CAS prefix directory, are links out of the store.
      await symlink(outside, join(path, 'ac'));
      await mkdir(join(path, 'cas'));
      await symlink(outside, join(path, 'cas', prefix));
      const logger = new RecordingLogger();
      const cas = await DiskBlobAccess.open({ path, maxBytes: 1 << 20, logger });
      const ac = await DiskBlobAccess.open({ path, maxBytes: 1 << 20, keyspace: 'ac', logger });
      await cas.put(a.digest, a.data);
      await ac.put(a.digest, a.data);
      expect(await readdir(outside)).toEqual([]);
      for (const keyspace of ['cas', 'ac']) {
        expect((await lstat(join(path, keyspace))).isDirectory()).toBe(true);
        expect((await lstat(join(path, keyspace, prefix))).isDirectory()).toBe(true);
        expect((await readFile(fileOf(path, a.digest, keyspace))).toString()).toBe('through a link');
      }
      expect(logger.warnings.some((w) => w.includes('which is not a directory'))).toBe(true);

      // A blob file that is a link (to a file named like it, outside) is no blob of the store.
      const b = blob('elsewhere');
      await writeFile(join(outside, b.digest.hash), b.data);
      await mkdir(join(path, 'cas', b.digest.hash.slice(0, 2)), { recursive: true });
      await symlink(join(outside, b.digest.hash), fileOf(path, b.digest));
      const reopened = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
      await expect(reopened.get(b.digest)).rejects.toThrow(NotFoundError);
      expect(await lstat(fileOf(path, b.digest)).catch(() => undefined)).toBeUndefined();
      expect((await readFile(join(outside, b.digest.hash))).toString()).toBe('elsewhere');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('evicts least recently used blobs by bytes, counting whole blocks', async () => {
    const path = await root();
    // Room for exactly three 5000-byte blobs (two 4 KiB blocks each, plus the per-file overhead).
    const store = await DiskBlobAccess.open({ path, maxBytes: 3 * diskUsageOf(5000) });
    const [a, b, c, d] = blobs(4, 5000);
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    await store.put(c!.digest, c!.data);
    await store.get(a!.digest); // a is now more recent than b
    await store.put(d!.digest, d!.data);

    expect(await store.findMissing([a!.digest, b!.digest, c!.digest, d!.digest])).toEqual([b!.digest]);
    const onDisk = await filesOnDisk(path);
    expect(onDisk.has(b!.digest.hash)).toBe(false);
    expect(onDisk.size).toBe(3);
    const charged = [...onDisk.values()].reduce((sum, size) => sum + diskUsageOf(size), 0);
    expect(store.usage.bytes).toBe(charged);
    expect(charged).toBeLessThanOrEqual(3 * diskUsageOf(5000));
  });

  it('counts small blobs by the block they occupy, not their length', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 10 * diskUsageOf(1) });
    for (let i = 0; i < 25; i++) {
      const b = blob(Buffer.from([i]));
      await store.put(b.digest, b.data);
    }
    expect(store.usage.blobs).toBe(10);
    expect((await filesOnDisk(path)).size).toBe(10);
  });

  it('shrinks to a smaller budget on start', async () => {
    const path = await root();
    const big = await DiskBlobAccess.open({ path, maxBytes: 100 * diskUsageOf(1000) });
    for (const b of blobs(20, 1000)) await big.put(b.digest, b.data);
    const small = await DiskBlobAccess.open({ path, maxBytes: 5 * diskUsageOf(1000) });
    expect(small.usage.blobs).toBe(5);
    expect((await filesOnDisk(path)).size).toBe(5);
  });

  it('refuses a blob larger than the whole budget, storing nothing', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 8192 });
    const a = blob(Buffer.alloc(10_000, 'x'));
    await expect(store.put(a.digest, a.data)).rejects.toBeInstanceOf(ResourceExhaustedError);
    await expect(store.beginWrite(a.digest)).rejects.toBeInstanceOf(ResourceExhaustedError);
    expect((await filesOnDisk(path)).size).toBe(0);
    expect(await readdir(join(path, 'cas', 'tmp'))).toEqual([]);
  });

  it('charges uploads in progress to the budget, evicting to make room for them', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 3 * diskUsageOf(5000) });
    const [a, b, c, d, e] = blobs(5, 5000);
    await store.put(a!.digest, a!.data);
    await store.put(b!.digest, b!.data);
    const upload = await store.beginWrite(c!.digest);
    const upload2 = await store.beginWrite(d!.digest);
    // Two reservations and the budget of three: the least recently used blob had to go.
    expect(store.uploadingBytes).toBe(2 * diskUsageOf(5000));
    expect(await store.findMissing([a!.digest, b!.digest])).toEqual([a!.digest]);

    // Three uploads at once fill the budget; a fourth must wait.
    const upload3 = await store.beginWrite(e!.digest);
    const refused = await store.beginWrite(blob(Buffer.alloc(5000, 'z')).digest).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(ResourceExhaustedError);
    expect((refused as ResourceExhaustedError).retryAfterMs).toBeGreaterThan(0);

    await upload.write(c!.data);
    await upload.commit();
    await upload2.abort();
    await upload3.abort();
    expect(store.uploadingBytes).toBe(0);
    expect(await store.findMissing([c!.digest, d!.digest])).toEqual([d!.digest]);
    expect(store.usage.bytes).toBeLessThanOrEqual(3 * diskUsageOf(5000));
  });

  it('survives concurrent puts and uploads of the same blob', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 4 << 20 });
    const a = blob(Buffer.alloc(200_000, 'concurrent'));
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        if (i % 2 === 0) return store.put(a.digest, Buffer.from(a.data));
        const w = await store.beginWrite(a.digest);
        for (let off = 0; off < a.data.length; off += 65536) await w.write(a.data.subarray(off, off + 65536));
        return w.commit();
      }),
    );
    expect(store.usage).toEqual({ blobs: 1, bytes: diskUsageOf(200_000) });
    expect((await store.get(a.digest)).equals(a.data)).toBe(true);
    expect(await readdir(join(path, 'cas', 'tmp'))).toEqual([]);
  });

  it('stays consistent under concurrent puts that force evictions', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 20 * diskUsageOf(3000) });
    const pool = blobs(60, 3000);
    await Promise.all(
      Array.from({ length: 400 }, (_, i) => {
        const b = pool[(i * 7) % pool.length]!;
        return store.put(b.digest, b.data);
      }),
    );
    // Whatever the index claims is there is there, intact, and the charge matches the files.
    const missing = new Set((await store.findMissing(pool.map((b) => b.digest))).map((d) => d.hash));
    const onDisk = await filesOnDisk(path);
    for (const b of pool) {
      expect(onDisk.has(b.digest.hash)).toBe(!missing.has(b.digest.hash));
      if (!missing.has(b.digest.hash)) expect((await store.get(b.digest)).equals(b.data)).toBe(true);
    }
    expect(store.usage.bytes).toBe([...onDisk.values()].reduce((s, n) => s + diskUsageOf(n), 0));
    expect(store.usage.bytes).toBeLessThanOrEqual(20 * diskUsageOf(3000));
  });

  it('forgets a blob whose file was removed behind its back', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
    const a = blob('gone');
    await store.put(a.digest, a.data);
    await unlink(fileOf(path, a.digest));
    await expect(store.get(a.digest)).rejects.toBeInstanceOf(NotFoundError);
    expect(store.usage.blobs).toBe(0);
  });

  it('misses a lookup whose size differs from the stored blob', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20 });
    const a = blob('sized');
    await store.put(a.digest, a.data);
    const wrongSize = { hash: a.digest.hash, sizeBytes: 99 };
    expect(await store.findMissing([wrongSize])).toEqual([wrongSize]);
    await expect(store.get(wrongSize)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('keys the action cache keyspace by hash only and lets results be replaced', async () => {
    const path = await root();
    const ac = await DiskBlobAccess.open({ path, maxBytes: 1 << 20, keyspace: 'ac' });
    const actionDigest = blob('an action').digest;
    await ac.put(actionDigest, Buffer.from('first result'));
    await ac.put(actionDigest, Buffer.from('second, longer result'));
    expect((await ac.get(actionDigest)).toString()).toBe('second, longer result');
    expect(await readFile(fileOf(path, actionDigest, 'ac'), 'utf8')).toBe('second, longer result');
    expect(ac.usage.blobs).toBe(1);
  });

  it('streams large blobs in bounded chunks', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 64 << 20 });
    const a = blob(Buffer.alloc(8 << 20, 'large'));
    await store.put(a.digest, a.data);
    const read = await store.read(a.digest, { offset: 1 << 20, chunkSizeBytes: 1 << 20 });
    let total = 0;
    for await (const chunk of read.chunks) {
      expect(chunk.length).toBeLessThanOrEqual(1 << 20);
      expect(chunk.equals(a.data.subarray((1 << 20) + total, (1 << 20) + total + chunk.length))).toBe(true);
      total += chunk.length;
    }
    expect(total).toBe(7 << 20);
  });

  it('writes with fsync when configured', async () => {
    const path = await root();
    const store = await DiskBlobAccess.open({ path, maxBytes: 1 << 20, sync: true });
    const a = blob('synced');
    await store.put(a.digest, a.data);
    const w = await store.beginWrite(blob('synced upload').digest);
    await w.write(Buffer.from('synced upload'));
    await w.commit();
    expect(await store.findMissing([a.digest, blob('synced upload').digest])).toEqual([]);
  });
});
