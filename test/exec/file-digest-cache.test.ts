import { createHash } from 'node:crypto';
import { chmod, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileDigestCache } from '../../src/exec/index.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('FileDigestCache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-digest-cache-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes a file whose mtime lies in the past, so it is not "racily clean". */
  async function writeOld(path: string, content: string, secondsAgo = 60): Promise<void> {
    await writeFile(path, content);
    const t = Date.now() / 1000 - secondsAgo;
    await utimes(path, t, t);
  }

  it('hashes an unchanged file once, across save and load', async () => {
    const file = join(dir, 'a.txt');
    await writeOld(file, 'hello');
    const cacheFile = join(dir, 'cache', 'digests.json');
    const first = await FileDigestCache.load(cacheFile);
    expect((await first.digest(file)).digest).toEqual({ hash: sha('hello'), sizeBytes: 5 });
    expect((await first.digest(file)).digest.hash).toBe(sha('hello'));
    expect(first.hashedFiles).toBe(1);
    await first.save();

    const second = await FileDigestCache.load(cacheFile);
    expect((await second.digest(file)).digest.hash).toBe(sha('hello'));
    expect(second.hashedFiles).toBe(0);
  });

  it('hashes again when the mtime changes, even if the size does not', async () => {
    const file = join(dir, 'a.txt');
    await writeOld(file, 'hello', 120);
    const cache = FileDigestCache.inMemory();
    await cache.digest(file);
    await writeOld(file, 'HELLO', 60);
    expect((await cache.digest(file)).digest.hash).toBe(sha('HELLO'));
    expect(cache.hashedFiles).toBe(2);
  });

  it('does not trust a file modified just before it was hashed (racily clean)', async () => {
    const file = join(dir, 'fresh.txt');
    await writeFile(file, 'now');
    const cache = FileDigestCache.inMemory();
    await cache.digest(file);
    await cache.digest(file);
    expect(cache.hashedFiles).toBe(2);
  });

  it('reads a large file once for the callers that ask for it at the same time, and again once it changed', async () => {
    const file = join(dir, 'tool.bin');
    const big = Buffer.alloc(1024 * 1024, 't');
    await writeFile(file, big);
    const cache = FileDigestCache.inMemory();
    // Just written: racily clean, so nothing is kept and each later call hashes again.
    const together = await Promise.all(Array.from({ length: 20 }, () => cache.digest(file)));
    expect(new Set(together.map((d) => d.digest.hash))).toEqual(new Set([createHash('sha256').update(big).digest('hex')]));
    expect(cache.hashedFiles).toBe(1);
    const changed = Buffer.alloc(1024 * 1024, 'u');
    await writeFile(file, changed);
    expect((await cache.digest(file)).digest.hash).toBe(createHash('sha256').update(changed).digest('hex'));
    expect(cache.hashedFiles).toBe(2);
    await expect(cache.digestIfPresent(join(dir, 'absent'))).resolves.toBeUndefined();
  });

  it('reports the executable bit and missing files', async () => {
    const file = join(dir, 'tool.sh');
    await writeOld(file, '#!/bin/sh\n');
    await chmod(file, 0o755);
    const cache = FileDigestCache.inMemory();
    expect((await cache.digest(file)).isExecutable).toBe(true);
    await expect(cache.digest(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
