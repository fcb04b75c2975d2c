import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapi } from '../../src/core/index.js';
import { blob, blobName, must, randomBytes, readStream, startTestServer, uploadName, uploadRequests, writeStream } from './cache-server-fixture.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-cache-blocks-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('cache server on the block store (kiln cluster up --storage DIR)', () => {
  it('keeps every blob and action result across a restart, in a few block files', async () => {
    const small = Array.from({ length: 500 }, (_, i) => blob(`small blob ${i}`));
    const large = blob(randomBytes(5 * 1024 * 1024, 7));
    const action = blob(reapi.Action.encode({ doNotCache: false, salt: Buffer.from('blocks') }));

    const first = await startTestServer({ storageDir: dir, storageKind: 'blocks' });
    await must(first.cas, first.cas.BatchUpdateBlobs, { requests: small.map((b) => ({ digest: b.digest, data: b.data })) });
    expect(await writeStream(first.bs, uploadRequests(uploadName(large.digest), large.data, 256 * 1024))).toMatchObject({ ok: true });
    await must(first.ac, first.ac.UpdateActionResult, {
      actionDigest: action.digest,
      actionResult: { outputFiles: [{ path: 'big', digest: large.digest }], exitCode: 0 },
    });
    await first.stop();
    expect((await readdir(join(dir, 'cas-blocks'))).length).toBeLessThanOrEqual(2);

    const second = await startTestServer({ storageDir: dir, storageKind: 'blocks' });
    try {
      const missing = await must(second.cas, second.cas.FindMissingBlobs, { blobDigests: [...small, large].map((b) => b.digest) });
      expect(missing.missingBlobDigests).toEqual([]);
      const read = await must(second.cas, second.cas.BatchReadBlobs, { digests: small.map((b) => b.digest) });
      expect(read.responses.map((r) => r.data.toString())).toEqual(small.map((b) => b.data.toString()));
      const big = await readStream(second.bs, { resourceName: blobName(large.digest), readOffset: 1000, readLimit: 3 * 1024 * 1024 });
      expect(big.ok && big.value.equals(large.data.subarray(1000, 1000 + 3 * 1024 * 1024))).toBe(true);
      const result = await must(second.ac, second.ac.GetActionResult, { actionDigest: action.digest });
      expect(result.outputFiles[0]!.path).toBe('big');
    } finally {
      await second.stop();
    }
  });
});
