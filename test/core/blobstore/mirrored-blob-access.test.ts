import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError, UnavailableError, type Digest } from '../../../src/core/index.js';
import { MemoryBlobAccess, MirroredBlobAccess, VerifyingBlobAccess, type BlobAccess } from '../../../src/core/blobstore/index.js';
import { blob, readAll, RecordingLogger } from './fixtures.js';

/** A store that can be taken down: every call fails UNAVAILABLE while `down`. */
class Switchable implements BlobAccess {
  down = false;
  constructor(readonly inner: BlobAccess) {}
  private check(): void {
    if (this.down) throw new UnavailableError('node down');
  }
  async get(d: Digest) {
    this.check();
    return this.inner.get(d);
  }
  async read(d: Digest, r?: Parameters<BlobAccess['read']>[1]) {
    this.check();
    return this.inner.read(d, r);
  }
  async put(d: Digest, data: Buffer) {
    this.check();
    return this.inner.put(d, data);
  }
  async beginWrite(d: Digest) {
    this.check();
    return this.inner.beginWrite(d);
  }
  async findMissing(ds: readonly Digest[]) {
    this.check();
    return this.inner.findMissing(ds);
  }
  async delete(d: Digest) {
    this.check();
    return this.inner.delete(d);
  }
}

/** Two memory stores behind the verifying layer a storage node has, one of which can be corrupted. */
function mirror(wholeCopyLimitBytes?: number) {
  const rawA = new MemoryBlobAccess({ maxBytes: 1 << 24 });
  const rawB = new MemoryBlobAccess({ maxBytes: 1 << 24 });
  const logger = new RecordingLogger();
  const a = new Switchable(new VerifyingBlobAccess(rawA, { wholeReadLimitBytes: 1024, logger }));
  const b = new Switchable(new VerifyingBlobAccess(rawB, { wholeReadLimitBytes: 1024, logger }));
  const mirrored = new MirroredBlobAccess(a, b, { logger, ...(wholeCopyLimitBytes !== undefined ? { wholeCopyLimitBytes } : {}) });
  return { rawA, rawB, a, b, mirrored, logger };
}

const has = async (store: BlobAccess, d: Digest) => (await store.findMissing([d])).length === 0;

describe('MirroredBlobAccess', () => {
  it('writes to both sides', async () => {
    const { rawA, rawB, mirrored } = mirror();
    const x = blob('on both');
    await mirrored.put(x.digest, x.data);
    expect(await has(rawA, x.digest)).toBe(true);
    expect(await has(rawB, x.digest)).toBe(true);
    const big = blob(Buffer.alloc(5000, 'w'));
    const writer = await mirrored.beginWrite(big.digest);
    await writer.write(big.data.subarray(0, 2000));
    await writer.write(big.data.subarray(2000));
    await writer.commit();
    expect(await has(rawA, big.digest)).toBe(true);
    expect(await has(rawB, big.digest)).toBe(true);
  });

  it('reads a blob missing on one side from the other and copies it back, small or streamed', async () => {
    for (const size of [100, 50_000]) {
      const { rawA, rawB, mirrored } = mirror(4096);
      const x = blob(Buffer.alloc(size, `m${size}`));
      await rawB.put(x.digest, x.data);
      // Reads alternate sides: two reads are sure to start on A once.
      expect((await mirrored.get(x.digest)).equals(x.data)).toBe(true);
      expect((await readAll(mirrored, x.digest)).equals(x.data)).toBe(true);
      expect(await has(rawA, x.digest)).toBe(true);
      expect((await rawA.get(x.digest)).equals(x.data)).toBe(true);
      await rawB.delete(x.digest);
      for (let i = 0; i < 2; i++) expect((await readAll(mirrored, x.digest, { offset: 10, limit: 20 })).equals(x.data.subarray(10, 30))).toBe(true);
      expect(await has(rawB, x.digest)).toBe(true);
    }
  });

  it('replaces a corrupt copy (which its verifying layer reports NOT_FOUND) on read', async () => {
    const { rawA, mirrored, logger } = mirror();
    const x = blob('good content');
    await mirrored.put(x.digest, x.data);
    // The stored copy on A rots: same size, other bytes.
    await rawA.delete(x.digest);
    await rawA.put(x.digest, Buffer.from('BAD!content!'));
    for (let i = 0; i < 2; i++) expect((await mirrored.get(x.digest)).equals(x.data)).toBe(true);
    expect((await rawA.get(x.digest)).equals(x.data)).toBe(true);
    expect(logger.warnings.some((w) => w.includes('corrupt'))).toBe(true);
  });

  it('says missing only what is missing on both, and copies one-sided blobs before answering', async () => {
    const { rawA, rawB, mirrored } = mirror();
    const onA = blob('only on a');
    const onB = blob('only on b');
    const both = blob('on both');
    const none = blob('on neither');
    await rawA.put(onA.digest, onA.data);
    await rawB.put(onB.digest, onB.data);
    await mirrored.put(both.digest, both.data);
    expect(await mirrored.findMissing([onA.digest, onB.digest, both.digest, none.digest])).toEqual([none.digest]);
    expect(await has(rawB, onA.digest)).toBe(true);
    expect(await has(rawA, onB.digest)).toBe(true);
  });

  it('reports missing a one-sided blob whose only copy turns out corrupt', async () => {
    const { rawB, mirrored } = mirror();
    const x = blob(Buffer.alloc(3000, 'c'));
    await rawB.put(x.digest, Buffer.alloc(3000, 'X'));
    expect(await mirrored.findMissing([x.digest])).toEqual([x.digest]);
  });

  it('keeps working with one side down: writes land on the other and are repaired when it returns', async () => {
    const { a, rawA, mirrored, logger } = mirror();
    const x = blob('written while a is down');
    a.down = true;
    await mirrored.put(x.digest, x.data);
    expect(logger.warnings.some((w) => w.includes('mirror a: could not store'))).toBe(true);
    expect(await mirrored.findMissing([x.digest])).toEqual([]);
    for (let i = 0; i < 2; i++) expect((await mirrored.get(x.digest)).equals(x.data)).toBe(true);
    a.down = false;
    expect(await has(rawA, x.digest)).toBe(false);
    expect(await mirrored.findMissing([x.digest])).toEqual([]);
    expect((await rawA.get(x.digest)).equals(x.data)).toBe(true);
  });

  it('fails a write both sides refuse, and one refused as bad content', async () => {
    const { a, b, mirrored } = mirror();
    const x = blob('content');
    await expect(mirrored.put(x.digest, Buffer.from('CONTENT'))).rejects.toBeInstanceOf(InvalidArgumentError);
    a.down = true;
    b.down = true;
    await expect(mirrored.put(x.digest, x.data)).rejects.toBeInstanceOf(UnavailableError);
    await expect(mirrored.findMissing([x.digest])).rejects.toBeInstanceOf(UnavailableError);
    b.down = false;
    await expect(mirrored.get(x.digest)).rejects.toBeInstanceOf(NotFoundError);
  });
});
