import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress, decompress } from 'zstd-napi';
import { bytestream, EMPTY_DIGEST } from '../../src/core/index.js';
import { byteStreamDefinition, serializeReadResponse } from '../../scheduler/byte-stream-service.js';
import { until } from '../setup/until.js';
import {
  blob,
  blobName,
  call,
  grpc,
  must,
  randomBytes,
  readStream,
  startTestServer,
  uploadName,
  uploadRequests,
  writeStream,
  type TestServer,
} from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { instanceNames: ['', 'main/x'], limits: { byteStreamChunkBytes: 16 * 1024 } } });
});
afterAll(() => t.stop());

const isMissing = async (digest: { hash: string; sizeBytes: number }, instanceName = '') =>
  (await must(t.cas, t.cas.FindMissingBlobs, { instanceName, blobDigests: [digest] })).missingBlobDigests.length === 1;

describe('ByteStream.Write', () => {
  it('stores a blob uploaded in chunks and answers its full size', async () => {
    const b = blob(randomBytes(200_000, 5));
    const outcome = await writeStream(t.bs, uploadRequests(uploadName(b.digest), b.data, 30_000));
    expect(outcome).toMatchObject({ ok: true, value: { committedSize: 200_000 } });
    const read = await readStream(t.bs, { resourceName: blobName(b.digest) });
    expect(read.ok && read.value.equals(b.data)).toBe(true);
  });

  it('accepts instance names with several segments and optional trailing metadata', async () => {
    const b = blob('with metadata');
    const name = `${uploadName(b.digest, 'f9a6b2a4-0000-4000-8000-000000000001', 'main/x')}/some/metadata`;
    expect(await writeStream(t.bs, uploadRequests(name, b.data))).toMatchObject({ ok: true });
    expect(await isMissing(b.digest, 'main/x')).toBe(false);
    // Instances do not share storage.
    expect(await isMissing(b.digest, '')).toBe(true);
  });

  it('rejects content whose size or hash differs from the resource name: INVALID_ARGUMENT, nothing stored', async () => {
    const claimed = blob('the claimed content');
    const wrongHash = await writeStream(t.bs, uploadRequests(uploadName(claimed.digest), Buffer.from('the uploaded CONTENT')));
    expect(wrongHash).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const tooLong = await writeStream(t.bs, uploadRequests(uploadName(claimed.digest), Buffer.from('the claimed content, and more')));
    expect(tooLong).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const tooShort = await writeStream(t.bs, uploadRequests(uploadName(claimed.digest), Buffer.from('the claimed')));
    expect(tooShort).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    expect(await isMissing(claimed.digest)).toBe(true);
  });

  it('finishes at once with the full size when the blob is already stored', async () => {
    const b = blob(randomBytes(50_000, 9));
    await must(t.cas, t.cas.BatchUpdateBlobs, { requests: [{ digest: b.digest, data: b.data }] });
    // Only the first of several chunks is sent; the server answers without waiting for the rest.
    const outcome = await new Promise<unknown>((resolve) => {
      const stream = t.bs.Write((err, value) => resolve(err ? err.code : value));
      stream.write({ resourceName: uploadName(b.digest), writeOffset: 0, data: b.data.subarray(0, 1000) });
    });
    expect(outcome).toMatchObject({ committedSize: 50_000 });
  });

  it.each([
    ['', 'missing'],
    ['uploads/u/blobs/abc/3', 'hash must be 64'],
    [`uploads/u/blobs/${'a'.repeat(64)}/-1`, 'size must be a decimal'],
    [`blobs/${'a'.repeat(64)}/1`, 'expected "uploads"'],
    [`uploads/u/compressed-blobs/brotli/${'a'.repeat(64)}/1`, 'not supported'],
    [`uploads/u/blobs/blake3/${'a'.repeat(64)}/1`, 'digest function "blake3"'],
    [`x//uploads/u/blobs/${'a'.repeat(64)}/1`, 'empty path segment'],
    [`other/uploads/u/blobs/${'a'.repeat(64)}/1`, 'unknown instance name'],
    [`uploads/u/foo/${'a'.repeat(64)}/1`, 'expected "blobs" or "compressed-blobs"'],
  ])('rejects the malformed resource name %j with INVALID_ARGUMENT', async (name, why) => {
    const outcome = await writeStream(t.bs, [{ resourceName: name, data: Buffer.from('x'), finishWrite: true }]);
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) {
      expect(outcome.message).toContain('resource_name');
      expect(outcome.message).toContain(why);
    }
  });

  it('accepts the sha256/ digest-function segment, and ends a compressed upload of a stored blob with -1', async () => {
    const b = blob('named with its digest function');
    const name = `uploads/df/blobs/sha256/${b.digest.hash}/${b.digest.sizeBytes}`;
    expect(await writeStream(t.bs, uploadRequests(name, b.data))).toMatchObject({ ok: true, value: { committedSize: b.data.length } });
    const read = await readStream(t.bs, { resourceName: `blobs/sha256/${b.digest.hash}/${b.digest.sizeBytes}` });
    expect(read.ok && read.value.equals(b.data)).toBe(true);
    const again = await writeStream(t.bs, uploadRequests(`uploads/df/compressed-blobs/zstd/${b.digest.hash}/${b.digest.sizeBytes}`, compress(b.data)));
    expect(again).toMatchObject({ ok: true, value: { committedSize: -1 } });
  });

  it('rejects a write_offset that does not follow the data sent', async () => {
    const b = blob('offset check!');
    const outcome = await writeStream(t.bs, [
      { resourceName: uploadName(b.digest), writeOffset: 0, data: b.data.subarray(0, 5) },
      { writeOffset: 7, data: b.data.subarray(5), finishWrite: true },
    ]);
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) expect(outcome.message).toContain('write_offset: expected 5, got 7');
  });

  it('resumes an upload after a broken stream from the offset QueryWriteStatus reports', async () => {
    const b = blob(randomBytes(300_000, 13));
    const name = uploadName(b.digest, '2b7e1516-28ae-4d2a-abf7-158809cf4f3c');
    const chunk = 10_000;
    // First attempt: send the first 12 chunks, wait until the server has committed some, then break it.
    let brokenCode: grpc.status | undefined;
    let onBroken: () => void = () => undefined;
    const failed = new Promise<void>((resolve) => (onBroken = resolve));
    const first = t.bs.Write((err) => {
      brokenCode = err?.code;
      onBroken();
    });
    for (const r of uploadRequests(name, b.data, chunk).slice(0, 12)) first.write(r);
    await until(
      async () => (await must(t.bs, t.bs.QueryWriteStatus, { resourceName: name })).committedSize >= chunk,
      'the first chunk to be committed',
      30_000,
      0,
    );
    first.cancel();
    await failed;
    expect(brokenCode).toBe(grpc.status.CANCELLED);
    const status = await must(t.bs, t.bs.QueryWriteStatus, { resourceName: name });
    expect(status.complete).toBe(false);
    expect(status.committedSize).toBeGreaterThanOrEqual(chunk);
    expect(status.committedSize).toBeLessThanOrEqual(12 * chunk);
    // Second attempt from the committed offset.
    const rest = uploadRequests(name, b.data, chunk, status.committedSize);
    expect(rest[0]!.writeOffset).toBe(status.committedSize);
    expect(await writeStream(t.bs, rest)).toMatchObject({ ok: true, value: { committedSize: 300_000 } });
    const read = await readStream(t.bs, { resourceName: blobName(b.digest) });
    expect(read.ok && read.value.equals(b.data)).toBe(true);
    expect(await must(t.bs, t.bs.QueryWriteStatus, { resourceName: name })).toMatchObject({ committedSize: 300_000, complete: true });
  });

  it('refuses to resume at an offset other than the committed one', async () => {
    const b = blob(randomBytes(40_000, 17));
    const name = uploadName(b.digest, 'resume-wrong-offset');
    const partial = await writeStream(t.bs, uploadRequests(name, b.data, 10_000).slice(0, 2));
    expect(partial).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!partial.ok) expect(partial.message).toContain('without a message with finish_write');
    expect(await must(t.bs, t.bs.QueryWriteStatus, { resourceName: name })).toMatchObject({ committedSize: 20_000, complete: false });
    const wrong = await writeStream(t.bs, uploadRequests(name, b.data, 10_000, 30_000));
    expect(wrong).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!wrong.ok) expect(wrong.message).toContain('committed size 20000');
    expect(await writeStream(t.bs, uploadRequests(name, b.data, 10_000, 20_000))).toMatchObject({ ok: true });
  });

  it('QueryWriteStatus of an unknown upload reports nothing committed', async () => {
    const b = blob('never started');
    expect(await must(t.bs, t.bs.QueryWriteStatus, { resourceName: uploadName(b.digest, 'nobody') })).toMatchObject({
      committedSize: 0,
      complete: false,
    });
    const bad = await call(t.bs, t.bs.QueryWriteStatus, { resourceName: 'nonsense' });
    expect(bad).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
  });

  it('accepts zstd-compressed uploads (offsets count compressed bytes) and verifies the uncompressed content', async () => {
    const b = blob(Buffer.concat([randomBytes(100_000, 23), Buffer.alloc(200_000, 'x')]));
    const compressed = compress(b.data);
    const name = `uploads/zz/compressed-blobs/zstd/${b.digest.hash}/${b.digest.sizeBytes}`;
    const outcome = await writeStream(t.bs, uploadRequests(name, compressed, 7_000));
    expect(outcome).toMatchObject({ ok: true, value: { committedSize: compressed.length } });
    const read = await readStream(t.bs, { resourceName: blobName(b.digest) });
    expect(read.ok && read.value.equals(b.data)).toBe(true);

    const liar = blob(Buffer.alloc(1000, 'y'));
    const wrong = await writeStream(t.bs, uploadRequests(`uploads/zz/compressed-blobs/zstd/${liar.digest.hash}/1000`, compress(Buffer.alloc(1000, 'z'))));
    expect(wrong).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const bomb = await writeStream(t.bs, uploadRequests(`uploads/zz/compressed-blobs/zstd/${liar.digest.hash}/1000`, compress(Buffer.alloc(100_000, 'y'))));
    expect(bomb).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    expect(await isMissing(liar.digest)).toBe(true);
  });
});

describe('ByteStream.Read', () => {
  const b = blob(randomBytes(100_000, 31));
  beforeAll(async () => {
    await writeStream(t.bs, uploadRequests(uploadName(b.digest), b.data));
  });

  it('streams a blob in chunks of the configured size', async () => {
    const sizes: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const s = t.bs.Read({ resourceName: blobName(b.digest) });
      s.on('data', (r: bytestream.ReadResponse) => sizes.push(r.data.length));
      s.on('end', resolve);
      s.on('error', reject);
    });
    expect(sizes.every((n) => n <= 16 * 1024)).toBe(true);
    expect(sizes.reduce((a, n) => a + n, 0)).toBe(100_000);
  });

  it('honours read_offset and read_limit', async () => {
    const part = await readStream(t.bs, { resourceName: blobName(b.digest), readOffset: 12_345, readLimit: 40_000 });
    expect(part.ok && part.value.equals(b.data.subarray(12_345, 52_345))).toBe(true);
    const tail = await readStream(t.bs, { resourceName: blobName(b.digest), readOffset: 99_000 });
    expect(tail.ok && tail.value.equals(b.data.subarray(99_000))).toBe(true);
    const atEnd = await readStream(t.bs, { resourceName: blobName(b.digest), readOffset: 100_000 });
    expect(atEnd).toMatchObject({ ok: true });
    if (atEnd.ok) expect(atEnd.value.length).toBe(0);
  });

  it('answers OUT_OF_RANGE for a negative or past-the-end offset, INVALID_ARGUMENT for a negative limit', async () => {
    expect(await readStream(t.bs, { resourceName: blobName(b.digest), readOffset: -1 })).toMatchObject({ ok: false, code: grpc.status.OUT_OF_RANGE });
    expect(await readStream(t.bs, { resourceName: blobName(b.digest), readOffset: 100_001 })).toMatchObject({
      ok: false,
      code: grpc.status.OUT_OF_RANGE,
    });
    const limit = await readStream(t.bs, { resourceName: blobName(b.digest), readLimit: -5 });
    expect(limit).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!limit.ok) expect(limit.message).toContain('read_limit');
  });

  it('answers NOT_FOUND for a missing blob and reads the empty blob as empty', async () => {
    expect(await readStream(t.bs, { resourceName: blobName(blob('missing!').digest) })).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
    const empty = await readStream(t.bs, { resourceName: blobName(EMPTY_DIGEST) });
    expect(empty.ok && empty.value.length === 0).toBe(true);
  });

  it('rejects malformed read resource names with INVALID_ARGUMENT', async () => {
    for (const name of ['blobs/xyz/1', `uploads/u/blobs/${b.digest.hash}/100000`, `${blobName(b.digest)}/extra`, `blobs/${b.digest.hash}`]) {
      const outcome = await readStream(t.bs, { resourceName: name });
      expect(outcome, name).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    }
  });

  it('compresses on the fly for compressed-blobs/zstd, from read_offset, and refuses a read_limit', async () => {
    const name = `compressed-blobs/zstd/${b.digest.hash}/${b.digest.sizeBytes}`;
    const whole = await readStream(t.bs, { resourceName: name });
    expect(whole.ok && decompress(whole.value).equals(b.data)).toBe(true);
    const fromOffset = await readStream(t.bs, { resourceName: name, readOffset: 60_000 });
    expect(fromOffset.ok && decompress(fromOffset.value).equals(b.data.subarray(60_000))).toBe(true);
    const empty = await readStream(t.bs, { resourceName: `compressed-blobs/zstd/${EMPTY_DIGEST.hash}/0` });
    expect(empty.ok && decompress(empty.value).length === 0).toBe(true);
    expect(await readStream(t.bs, { resourceName: name, readLimit: 10 })).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
  });
});

describe('serializeReadResponse', () => {
  it('writes exactly what the generated encoder writes, at every varint length of the size', () => {
    for (const size of [0, 1, 127, 128, 16_383, 16_384, 1024 * 1024, 2_097_151, 2_097_152]) {
      const data = Buffer.alloc(size, size % 251);
      const ours = serializeReadResponse({ data });
      expect(ours.equals(bytestream.ReadResponse.encode({ data })), `size ${size}`).toBe(true);
      expect(bytestream.ReadResponse.decode(ours).data.equals(data)).toBe(true);
    }
    expect(byteStreamDefinition.Read.responseSerialize).toBe(serializeReadResponse);
  });
});
