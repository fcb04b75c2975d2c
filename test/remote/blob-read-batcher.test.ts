import { describe, expect, it } from 'vitest';
import type { Digest } from '../../src/core/index.js';
import { BlobReadBatcher } from '../../src/remote/blob-read-batcher.js';

const digest = (n: number): Digest => ({ hash: n.toString(16).padStart(64, '0'), sizeBytes: 10 });
const bytesOf = (d: Digest) => Buffer.from(d.hash.slice(-4));

/** A batch reader whose batches the test answers one at a time. */
function scriptedReader() {
  const batches: Digest[][] = [];
  const answers: (() => void)[] = [];
  const read = (digests: Digest[]) => {
    batches.push(digests);
    return new Promise<Map<string, Buffer | Error>>((resolve) => {
      answers.push(() => resolve(new Map(digests.map((d) => [`${d.hash}/${d.sizeBytes}`, bytesOf(d)]))));
    });
  };
  return { batches, read, answerNext: () => answers.shift()!() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('BlobReadBatcher', () => {
  it('sends what one turn asked for together, within the byte limit, and while its batches are busy gathers the next', async () => {
    const reader = scriptedReader();
    // Each blob costs 10 bytes: three fit in 35; one batch in flight at a time.
    const batcher = new BlobReadBatcher(reader.read, (d) => d.sizeBytes, 35, 1);
    const first = [1, 2, 3, 4].map((n) => batcher.read(digest(n)));
    const again = batcher.read(digest(2));
    await settle();
    expect(reader.batches.map((b) => b.length)).toEqual([3]);
    const later = [5, 6].map((n) => batcher.read(digest(n)));
    await settle();
    expect(reader.batches).toHaveLength(1); // still busy
    reader.answerNext();
    await settle();
    // Blob 4 and the two asked for meanwhile, in one batch; blob 2 was asked for once.
    expect(reader.batches.map((b) => b.map((d) => Number.parseInt(d.hash, 16)))).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    reader.answerNext();
    expect((await Promise.all([...first, again, ...later])).map((b) => b.toString())).toEqual(['0001', '0002', '0003', '0004', '0002', '0005', '0006']);
  });

  it('fails the waiters of a blob the answer lacks, and every waiter when the reader throws', async () => {
    const lacking = new BlobReadBatcher(
      async () => new Map(),
      (d) => d.sizeBytes,
      100,
      2,
    );
    await expect(lacking.read(digest(7))).rejects.toThrow(/no answer for blob 0+7\/10/);
    const throwing = new BlobReadBatcher(
      () => {
        throw new Error('reader broke');
      },
      (d) => d.sizeBytes,
      100,
      2,
    );
    await expect(Promise.all([throwing.read(digest(8)), throwing.read(digest(9))])).rejects.toThrow('reader broke');
    // Nothing stays in flight: a later read goes out.
    await expect(throwing.read(digest(10))).rejects.toThrow('reader broke');
  });
});
