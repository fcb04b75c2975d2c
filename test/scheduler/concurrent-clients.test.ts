import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/index.js';
import {
  blob,
  blobName,
  connect,
  must,
  randomBytes,
  readStream,
  startTestServer,
  uploadName,
  uploadRequests,
  writeStream,
  type TestBlob,
  type TestServer,
} from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ disk: true, config: { limits: { maxBatchTotalSizeBytes: 512 * 1024 } } });
});
afterAll(() => t.stop());

describe('8 concurrent clients with overlapping blobs', () => {
  it('lose nothing and store nothing corrupt', async () => {
    // 24 shared blobs (small and large); each client uploads a sliding window of 12 of them, so every
    // blob is uploaded by several clients at once, half through batches and half through ByteStream.
    const shared: TestBlob[] = Array.from({ length: 24 }, (_, i) => blob(randomBytes(i % 3 === 0 ? 300_000 + i : 2_000 + i * 37, 100 + i)));
    const clients = Array.from({ length: 8 }, () => connect(t.server.endpoint));
    try {
      await Promise.all(
        clients.map(async (c, n) => {
          const mine = Array.from({ length: 12 }, (_, k) => shared[(n * 3 + k) % shared.length]!);
          for (const [k, b] of mine.entries()) {
            if (b.data.length > 100_000 || k % 2 === 1) {
              const outcome = await writeStream(c.bs, uploadRequests(uploadName(b.digest, `client-${n}-${k}`), b.data, 32 * 1024));
              if (!outcome.ok) throw new Error(`client ${n}: upload failed: ${outcome.message}`);
            } else {
              const res = await must(c.cas, c.cas.BatchUpdateBlobs, { requests: [{ digest: b.digest, data: b.data }] });
              if (res.responses[0]!.status?.code !== 0) throw new Error(`client ${n}: batch upload failed: ${res.responses[0]!.status?.message}`);
            }
          }
          // Each client reads back every shared blob it can see, in both ways, and checks the bytes.
          for (const b of mine) {
            const read = await readStream(c.bs, { resourceName: blobName(b.digest) });
            if (!read.ok || !read.value.equals(b.data)) throw new Error(`client ${n}: bad read of ${b.digest.hash}`);
          }
        }),
      );
      const everyone = shared.map((b) => b.digest);
      const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: everyone });
      expect(missing.missingBlobDigests).toEqual([]);
      for (const b of shared) {
        const read = await readStream(t.bs, { resourceName: blobName(b.digest) });
        expect(read.ok && read.value.equals(b.data)).toBe(true);
      }
      expect(t.server.context.limiter.load).toEqual({ requests: 0, bytes: 0 });
      // On disk: exactly the shared blobs, each file's content hashing to its name; no temp files left.
      const files: string[] = [];
      for (const prefix of await readdir(join(t.storageDir!, 'cas'))) {
        if (prefix === 'tmp') {
          expect(await readdir(join(t.storageDir!, 'cas', prefix))).toEqual([]);
          continue;
        }
        for (const name of await readdir(join(t.storageDir!, 'cas', prefix))) {
          const content = await readFile(join(t.storageDir!, 'cas', prefix, name));
          expect(digestOf(content).hash).toBe(name);
          files.push(name);
        }
      }
      expect(files.sort()).toEqual(shared.map((b) => b.digest.hash).sort());
    } finally {
      clients.forEach((c) => c.close());
    }
  });
});
