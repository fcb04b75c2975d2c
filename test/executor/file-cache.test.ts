import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf, InternalError, type Digest } from '../../src/core/index.js';
import { FileCache } from '../../executor/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-file-cache-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A fake CAS: a map of blobs, counting downloads. */
function fakeCas(blobs: Buffer[]) {
  const byHash = new Map(blobs.map((b) => [digestOf(b).hash, b]));
  const downloads: string[] = [];
  return {
    downloads,
    download: async (d: Digest, path: string) => {
      downloads.push(d.hash);
      await writeFile(path, byHash.get(d.hash) ?? Buffer.from('wrong content'));
    },
  };
}

describe('FileCache', () => {
  it('downloads a blob once and hard-links read-only copies', async () => {
    const data = Buffer.from('shared input');
    const cas = fakeCas([data]);
    const cache = await FileCache.open(join(dir, 'cache'), 1024, cas.download);
    await cache.linkInto(digestOf(data), false, join(dir, 'a'));
    await cache.linkInto(digestOf(data), false, join(dir, 'b'));
    expect(cas.downloads).toHaveLength(1);
    expect(await readFile(join(dir, 'b'), 'utf8')).toBe('shared input');
    const s = await stat(join(dir, 'a'));
    expect(s.nlink).toBe(3);
    expect(s.mode & 0o777).toBe(0o444);
  });

  it('hands out copies, and checks the cached file against its digest first for a verified copy', async () => {
    const data = Buffer.from('cached input');
    const cas = fakeCas([data]);
    const cache = await FileCache.open(join(dir, 'cache'), 1024, cas.download);
    await cache.handOut(digestOf(data), false, join(dir, 'copy'), 'copy');
    const copy = await stat(join(dir, 'copy'));
    expect(copy.nlink).toBe(1);
    expect(copy.mode & 0o777).toBe(0o444);
    // A plain process rewrote the cached file: the verified copy fetches it again.
    const cached = join(dir, 'cache', `${digestOf(data).hash}-${data.length}`);
    await chmod(cached, 0o644);
    await writeFile(cached, 'poisoned!!!!');
    await cache.handOut(digestOf(data), false, join(dir, 'checked'), 'verified-copy');
    expect(await readFile(join(dir, 'checked'), 'utf8')).toBe('cached input');
    expect(cas.downloads).toHaveLength(2);
    // A copy never goes through a symlink already at its destination.
    await symlink(join(dir, 'elsewhere'), join(dir, 'trap'));
    await expect(cache.handOut(digestOf(data), false, join(dir, 'trap'), 'copy')).rejects.toThrow(/EEXIST/);
    await expect(stat(join(dir, 'elsewhere'))).rejects.toThrow(/ENOENT/);
  });

  it('keeps executable and plain copies apart', async () => {
    const data = Buffer.from('#!/bin/sh\n');
    const cache = await FileCache.open(join(dir, 'cache'), 1024, fakeCas([data]).download);
    await cache.linkInto(digestOf(data), true, join(dir, 'x'));
    await cache.linkInto(digestOf(data), false, join(dir, 'p'));
    expect((await stat(join(dir, 'x'))).mode & 0o777).toBe(0o555);
    expect((await stat(join(dir, 'p'))).mode & 0o777).toBe(0o444);
  });

  it('evicts the least recently used entries beyond its size bound, never breaking existing links', async () => {
    const blobs = ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc'].map((s) => Buffer.from(s));
    const cas = fakeCas(blobs);
    const cache = await FileCache.open(join(dir, 'cache'), 20, cas.download);
    await cache.linkInto(digestOf(blobs[0]!), false, join(dir, 'a1'));
    await cache.linkInto(digestOf(blobs[1]!), false, join(dir, 'b1'));
    await cache.linkInto(digestOf(blobs[0]!), false, join(dir, 'a2')); // a is now the most recent
    await cache.linkInto(digestOf(blobs[2]!), false, join(dir, 'c1')); // evicts b
    expect(cache.sizeBytes).toBe(20);
    expect(await readFile(join(dir, 'b1'), 'utf8')).toBe('bbbbbbbbbb');
    await cache.linkInto(digestOf(blobs[0]!), false, join(dir, 'a3'));
    await cache.linkInto(digestOf(blobs[1]!), false, join(dir, 'b2'));
    expect(cas.downloads.map((h) => blobs.findIndex((b) => digestOf(b).hash === h))).toEqual([0, 1, 2, 1]);
  });

  it('refuses content that does not match the digest', async () => {
    const cache = await FileCache.open(join(dir, 'cache'), 1024, fakeCas([]).download);
    await expect(cache.linkInto(digestOf(Buffer.from('expected')), false, join(dir, 'x'))).rejects.toThrow(InternalError);
    expect(cache.entryCount).toBe(0);
  });

  it('shares one download between concurrent requests', async () => {
    const data = Buffer.from('concurrent');
    const cas = fakeCas([data]);
    const cache = await FileCache.open(join(dir, 'cache'), 1024, cas.download);
    await Promise.all(Array.from({ length: 5 }, (_, i) => cache.linkInto(digestOf(data), false, join(dir, `f${i}`))));
    expect(cas.downloads).toHaveLength(1);
  });
});
