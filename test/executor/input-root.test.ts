import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestKey, digestOf, encodeMessage, reapi, type Digest } from '../../src/core/index.js';
import type { ExecutorCas } from '../../executor/cas-client.js';
import { FileCache } from '../../executor/file-cache.js';
import { directoriesByDigest, materializeInputRoot } from '../../executor/input-root.js';

/** A CAS in memory that records which digests each getMany asked for. */
function recordingCas(blobs: Map<string, Buffer>, asked: string[][]): ExecutorCas {
  const get = (d: Digest) => {
    const b = blobs.get(digestKey(d));
    if (!b) throw new Error(`missing ${digestKey(d)}`);
    return b;
  };
  return {
    getMany: async (digests) => {
      asked.push(digests.map(digestKey));
      return new Map(digests.map((d) => [digestKey(d), get(d)]));
    },
    get: async (d) => get(d),
    download: async () => {
      throw new Error('no file downloads in this test');
    },
    uploadMissing: async () => undefined,
    close: () => undefined,
  };
}

describe('materializeInputRoot with the directories of the assignment', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'kiln-input-root-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  async function tree() {
    const blobs = new Map<string, Buffer>();
    const put = (data: Buffer): Digest => {
      const d = digestOf(data);
      blobs.set(digestKey(d), data);
      return d;
    };
    const file = put(Buffer.from('content'));
    const leaf = encodeMessage(reapi.Directory, { files: [{ name: 'f.txt', digest: file }] }).data;
    const middle = encodeMessage(reapi.Directory, { directories: [{ name: 'leaf', digest: put(leaf) }] }).data;
    const root = encodeMessage(reapi.Directory, {
      directories: [
        { name: 'mid', digest: put(middle) },
        { name: 'empty', digest: digestOf(Buffer.alloc(0)) },
      ],
    }).data;
    const rootDigest = put(root);
    const cache = await FileCache.open(join(work, 'cache'), 1 << 20, async (d, path) => {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path, blobs.get(digestKey(d))!);
    });
    return { blobs, rootDigest, root, middle, leaf, cache };
  }

  it('reads no directory from the CAS when the assignment carries them all, the empty one included', async () => {
    const t = await tree();
    const asked: string[][] = [];
    const dir = join(work, 'b');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    await materializeInputRoot(recordingCas(t.blobs, asked), t.cache, t.rootDigest, dir, 'copy', directoriesByDigest([t.root, t.middle, t.leaf]));
    expect(asked).toEqual([]);
    expect(readFileSync(join(dir, 'mid/leaf/f.txt'), 'utf8')).toBe('content');
    expect(readdirSync(join(dir, 'empty'))).toEqual([]);
  });

  it('fetches only the directories the assignment left out, and never uses a blob for another digest', async () => {
    const t = await tree();
    const asked: string[][] = [];
    const dir = join(work, 'b');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    // A blob is known by its own hash only: an unrelated Directory cannot stand in for the middle one.
    const stranger = encodeMessage(reapi.Directory, { files: [{ name: 'evil', digest: digestOf(Buffer.from('x')) }] }).data;
    await materializeInputRoot(recordingCas(t.blobs, asked), t.cache, t.rootDigest, dir, 'copy', directoriesByDigest([t.root, t.leaf, stranger]));
    expect(asked).toEqual([[digestKey(digestOf(t.middle))]]);
    expect(readdirSync(join(dir, 'mid'))).toEqual(['leaf']);
  });
});
