import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestKey, digestOf, EMPTY_DIGEST, reapi, type Digest } from '../../src/core/index.js';
import { FastCdc2020Chunker } from '../../scheduler/index.js';
import { zstdCompress } from '../../src/core/index.js';
import { blob, call, grpc, must, randomBytes, startTestServer, uploadName, uploadRequests, writeStream, type TestServer } from './cache-server-fixture.js';

const BATCH_LIMIT = 256 * 1024;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { limits: { maxBatchTotalSizeBytes: BATCH_LIMIT }, chunking: { avgChunkSizeBytes: 4096 } } });
});
afterAll(() => t.stop());

const upload = (...blobs: { digest: Digest; data: Buffer }[]) =>
  must(t.cas, t.cas.BatchUpdateBlobs, { requests: blobs.map((b) => ({ digest: b.digest, data: b.data })) });

describe('FindMissingBlobs', () => {
  it('lists exactly the blobs not stored, never the empty blob', async () => {
    const stored = blob('stored for find-missing');
    const absent = blob('never uploaded');
    await upload(stored);
    const res = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [stored.digest, absent.digest, EMPTY_DIGEST, absent.digest] });
    expect(res.missingBlobDigests.map(digestKey)).toEqual([digestKey(absent.digest)]);
  });

  it('rejects a malformed digest with INVALID_ARGUMENT naming the field', async () => {
    const outcome = await call(t.cas, t.cas.FindMissingBlobs, { blobDigests: [EMPTY_DIGEST, { hash: 'XYZ', sizeBytes: 3 }] });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) expect(outcome.message).toContain('blob_digests[1]');
  });

  it('rejects an unsupported digest function', async () => {
    const outcome = await call(t.cas, t.cas.FindMissingBlobs, { blobDigests: [], digestFunction: reapi.DigestFunction_Value.BLAKE3 });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) expect(outcome.message).toMatch(/digest_function: .*BLAKE3/);
  });
});

describe('BatchUpdateBlobs', () => {
  it('accepts the empty blob, whose data field is absent on the wire', async () => {
    const res = await must(t.cas, t.cas.BatchUpdateBlobs, { requests: [{ digest: EMPTY_DIGEST, data: Buffer.alloc(0) }] });
    expect(res.responses.map((r) => r.status?.code ?? 0)).toEqual([0]);
  });

  it('stores each blob and answers one status per blob; a mismatched blob is INVALID_ARGUMENT and not stored', async () => {
    const good = blob('good batch blob');
    const liar = { digest: blob('what the digest says').digest, data: Buffer.from('something else') };
    const res = await must(t.cas, t.cas.BatchUpdateBlobs, {
      requests: [
        { digest: good.digest, data: good.data },
        { digest: liar.digest, data: liar.data },
        { digest: { hash: 'nothex', sizeBytes: 1 }, data: Buffer.from('x') },
      ],
    });
    expect(res.responses.map((r) => r.status?.code)).toEqual([0, grpc.status.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT]);
    expect(res.responses[1]!.status?.message).toMatch(/received 14 bytes|SHA-256/);
    expect(res.responses[2]!.status?.message).toContain('requests[2].digest');
    const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [good.digest, liar.digest] });
    expect(missing.missingBlobDigests.map(digestKey)).toEqual([digestKey(liar.digest)]);
  });

  it('accepts zstd-compressed data and stores the uncompressed blob', async () => {
    const b = blob(Buffer.alloc(10_000, 'compress me '));
    const res = await must(t.cas, t.cas.BatchUpdateBlobs, {
      requests: [{ digest: b.digest, data: zstdCompress(b.data), compressor: reapi.Compressor_Value.ZSTD }],
    });
    expect(res.responses[0]!.status?.code).toBe(0);
    const read = await must(t.cas, t.cas.BatchReadBlobs, { digests: [b.digest] });
    expect(read.responses[0]!.data.equals(b.data)).toBe(true);
  });

  it('rejects zstd data that decompresses to something else, and compressors it does not support', async () => {
    const b = blob('the real content');
    const res = await must(t.cas, t.cas.BatchUpdateBlobs, {
      requests: [
        { digest: b.digest, data: zstdCompress(Buffer.from('other content!!!')), compressor: reapi.Compressor_Value.ZSTD },
        { digest: b.digest, data: b.data, compressor: reapi.Compressor_Value.BROTLI },
      ],
    });
    expect(res.responses.map((r) => r.status?.code)).toEqual([grpc.status.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT]);
    expect(res.responses[1]!.status?.message).toContain('requests[1].compressor');
    const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [b.digest] });
    expect(missing.missingBlobDigests).toHaveLength(1);
  });

  it('rejects a batch over max_batch_total_size_bytes with INVALID_ARGUMENT and stores nothing', async () => {
    const a = blob(randomBytes(BATCH_LIMIT / 2 + 1, 7));
    const b = blob(randomBytes(BATCH_LIMIT / 2 + 1, 8));
    const outcome = await call(t.cas, t.cas.BatchUpdateBlobs, { requests: [a, b].map((x) => ({ digest: x.digest, data: x.data })) });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) expect(outcome.message).toContain('max_batch_total_size_bytes');
    const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [a.digest, b.digest] });
    expect(missing.missingBlobDigests).toHaveLength(2);
  });
});

describe('BatchReadBlobs', () => {
  it('returns stored blobs, NOT_FOUND per missing blob, and the empty blob always', async () => {
    const a = blob('read me');
    await upload(a);
    const absent = blob('absent from the CAS');
    const res = await must(t.cas, t.cas.BatchReadBlobs, { digests: [a.digest, absent.digest, EMPTY_DIGEST] });
    expect(res.responses.map((r) => r.status?.code)).toEqual([0, grpc.status.NOT_FOUND, 0]);
    expect(res.responses[0]!.data.toString()).toBe('read me');
    expect(res.responses[1]!.digest).toMatchObject({ hash: absent.digest.hash });
    expect(res.responses[2]!.data.length).toBe(0);
  });

  it('compresses with zstd when the client accepts it', async () => {
    const b = blob(Buffer.alloc(50_000, 'zzz'));
    await upload(b);
    const res = await must(t.cas, t.cas.BatchReadBlobs, { digests: [b.digest], acceptableCompressors: [reapi.Compressor_Value.ZSTD] });
    const r = res.responses[0]!;
    expect(r.compressor).toBe(reapi.Compressor_Value.ZSTD);
    expect(r.data.length).toBeLessThan(b.data.length);
    const { decompress } = await import('zstd-napi');
    expect(decompress(r.data).equals(b.data)).toBe(true);
  });

  it('rejects a read over max_batch_total_size_bytes', async () => {
    const outcome = await call(t.cas, t.cas.BatchReadBlobs, { digests: [{ hash: 'a'.repeat(64), sizeBytes: BATCH_LIMIT + 1 }] });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
  });
});

/** Builds a tree of directories: root -> `width` children -> each with `width` grandchildren. */
async function uploadTree(width: number, tag: string): Promise<{ root: Digest; all: Digest[] }> {
  const all: Digest[] = [];
  const put = async (dir: reapi.DirectoryInit): Promise<Digest> => {
    const data = reapi.Directory.encode(dir);
    const d = digestOf(data);
    await upload({ digest: d, data });
    all.push(d);
    return d;
  };
  const children: reapi.DirectoryNodeInit[] = [];
  for (let i = 0; i < width; i++) {
    const grandchildren: reapi.DirectoryNodeInit[] = [];
    for (let j = 0; j < width; j++) {
      const leaf = await put({ files: [{ name: `f-${tag}-${i}-${j}`, digest: EMPTY_DIGEST }] });
      grandchildren.push({ name: `g${j}`, digest: leaf });
    }
    children.push({ name: `c${i}`, digest: await put({ directories: grandchildren }) });
  }
  const root = await put({ directories: children });
  return { root, all };
}

function getTree(request: reapi.GetTreeRequestInit): Promise<{ pages: reapi.GetTreeResponse[]; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    const pages: reapi.GetTreeResponse[] = [];
    const stream = t.cas.GetTree(request);
    stream.on('data', (p: reapi.GetTreeResponse) => pages.push(p));
    stream.on('error', (error: grpc.ServiceError) => resolve({ pages, error }));
    stream.on('end', () => resolve({ pages }));
  });
}

describe('GetTree', () => {
  it('streams every directory once, in pages of page_size, each page with the token that resumes after it', async () => {
    const { root, all } = await uploadTree(3, 'pages');
    const { pages, error } = await getTree({ rootDigest: root, pageSize: 4 });
    expect(error).toBeUndefined();
    expect(pages.map((p) => p.directories.length)).toEqual([4, 4, 4, 1]);
    expect(pages.at(-1)!.nextPageToken).toBe('');
    const seen = pages.flatMap((p) => p.directories.map((d) => digestKey(digestOf(reapi.Directory.encode(d)))));
    expect(new Set(seen)).toEqual(new Set(all.map(digestKey)));
    expect(seen).toHaveLength(all.length);

    // Resuming from the second page's token gives exactly the rest.
    const resumed = await getTree({ rootDigest: root, pageSize: 4, pageToken: pages[1]!.nextPageToken });
    const rest = resumed.pages.flatMap((p) => p.directories.map((d) => digestKey(digestOf(reapi.Directory.encode(d)))));
    expect(rest).toEqual(seen.slice(8));
  });

  it('leaves out missing subdirectories (REAPI: "the portion present") and is NOT_FOUND for a missing root', async () => {
    const missingChild = digestOf(reapi.Directory.encode({ files: [{ name: 'never uploaded', digest: EMPTY_DIGEST }] }));
    const present = blob(reapi.Directory.encode({ symlinks: [{ name: 'l', target: 't' }] }));
    await upload(present);
    const rootData = reapi.Directory.encode({
      directories: [
        { name: 'a', digest: missingChild },
        { name: 'b', digest: present.digest },
      ],
    });
    const root = blob(rootData);
    await upload(root);
    const { pages, error } = await getTree({ rootDigest: root.digest });
    expect(error).toBeUndefined();
    expect(pages.flatMap((p) => p.directories)).toHaveLength(2);

    const gone = await getTree({ rootDigest: missingChild });
    expect(gone.error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('rejects a page token it did not issue, or one for another root', async () => {
    const { root } = await uploadTree(1, 'tokens');
    const other = await uploadTree(1, 'other');
    const first = await getTree({ rootDigest: other.root, pageSize: 1 });
    const foreign = await getTree({ rootDigest: root, pageToken: first.pages[0]!.nextPageToken });
    expect(foreign.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(foreign.error?.details).toContain('page_token');
    const garbage = await getTree({ rootDigest: root, pageToken: '!!not-a-token' });
    expect(garbage.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('SplitBlob and SpliceBlob', () => {
  it('splits a blob into stored FastCDC 2020 chunks that concatenate to it', async () => {
    const b = blob(randomBytes(100_000, 3));
    await upload(b);
    const res = await must(t.cas, t.cas.SplitBlob, { blobDigest: b.digest });
    expect(res.chunkingFunction).toBe(reapi.ChunkingFunction_Value.FAST_CDC_2020);
    const chunker = new FastCdc2020Chunker({ avgChunkSizeBytes: 4096 });
    const expected: string[] = [];
    let rest = b.data;
    while (rest.length > 0) {
      const n = chunker.cut(rest);
      expect(n).toBeGreaterThan(0); // each cut makes progress, so the loop ends
      expected.push(digestKey(digestOf(rest.subarray(0, n))));
      rest = rest.subarray(n);
    }
    expect(res.chunkDigests.map((d) => digestKey({ hash: d.hash, sizeBytes: d.sizeBytes }))).toEqual(expected);
    expect(res.chunkDigests.length).toBeGreaterThan(5);
    const read = await must(t.cas, t.cas.BatchReadBlobs, { digests: res.chunkDigests });
    expect(Buffer.concat(read.responses.map((r) => r.data)).equals(b.data)).toBe(true);
  });

  it('splice rebuilds a blob from stored chunks, verifying the result', async () => {
    const whole = blob(randomBytes(30_000, 11));
    const parts = [whole.data.subarray(0, 10_000), whole.data.subarray(10_000, 25_000), whole.data.subarray(25_000)].map((p) => blob(Buffer.from(p)));
    await upload(...parts);
    const res = await must(t.cas, t.cas.SpliceBlob, { blobDigest: whole.digest, chunkDigests: parts.map((p) => p.digest) });
    expect(res.blobDigest).toMatchObject({ hash: whole.digest.hash, sizeBytes: whole.digest.sizeBytes });
    const read = await must(t.cas, t.cas.BatchReadBlobs, { digests: [whole.digest] });
    expect(read.responses[0]!.data.equals(whole.data)).toBe(true);
  });

  it('split then splice round-trips into a fresh store', async () => {
    const b = blob(randomBytes(60_000, 21));
    await upload(b);
    const split = await must(t.cas, t.cas.SplitBlob, { blobDigest: b.digest });
    const other = await startTestServer({ config: { chunking: { avgChunkSizeBytes: 4096 } } });
    try {
      const chunks = await must(t.cas, t.cas.BatchReadBlobs, { digests: split.chunkDigests });
      await must(other.cas, other.cas.BatchUpdateBlobs, { requests: chunks.responses.map((r) => ({ digest: r.digest, data: r.data })) });
      await must(other.cas, other.cas.SpliceBlob, { blobDigest: b.digest, chunkDigests: split.chunkDigests });
      const read = await must(other.cas, other.cas.BatchReadBlobs, { digests: [b.digest] });
      expect(read.responses[0]!.data.equals(b.data)).toBe(true);
    } finally {
      await other.stop();
    }
  });

  it('splice of chunks that do not make the blob is INVALID_ARGUMENT and stores nothing', async () => {
    const wanted = blob('AAAABBBB');
    const parts = [blob('AAAA'), blob('CCCC')];
    await upload(...parts);
    const outcome = await call(t.cas, t.cas.SpliceBlob, { blobDigest: wanted.digest, chunkDigests: parts.map((p) => p.digest) });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const sizes = await call(t.cas, t.cas.SpliceBlob, { blobDigest: wanted.digest, chunkDigests: [parts[0]!.digest] });
    expect(sizes).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [wanted.digest] });
    expect(missing.missingBlobDigests).toHaveLength(1);
  });

  it('splice with a missing chunk is NOT_FOUND; split of a missing blob is NOT_FOUND', async () => {
    const wanted = blob('XXXXYYYY');
    await upload(blob('XXXX'));
    const outcome = await call(t.cas, t.cas.SpliceBlob, { blobDigest: wanted.digest, chunkDigests: [blob('XXXX').digest, blob('YYYY').digest] });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
    const split = await call(t.cas, t.cas.SplitBlob, { blobDigest: wanted.digest });
    expect(split).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
  });
});

describe('max_cas_blob_size_bytes', () => {
  it('refuses larger blobs with INVALID_ARGUMENT in batches and streams, and advertises the limit', async () => {
    const small = await startTestServer({ config: { limits: { maxCasBlobSizeBytes: 100 } } });
    try {
      const caps = await must(small.caps, small.caps.GetCapabilities, {});
      expect(caps.cacheCapabilities?.maxCasBlobSizeBytes).toBe(100);
      const big = blob(Buffer.alloc(101, 'x'));
      const res = await must(small.cas, small.cas.BatchUpdateBlobs, { requests: [{ digest: big.digest, data: big.data }] });
      expect(res.responses[0]!.status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      expect(res.responses[0]!.status?.message).toContain('max_cas_blob_size_bytes');
      const streamed = await writeStream(small.bs, uploadRequests(uploadName(big.digest), big.data));
      expect(streamed).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    } finally {
      await small.stop();
    }
  });
});
