import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestKey, reapi } from '../../src/core/index.js';
import { blob, blobName, grpc, must, randomBytes, readStream, startTestServer, uploadName, uploadRequests, writeStream } from './cache-server-fixture.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-cache-disk-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const blobFile = (hash: string) => join(dir, 'cas', hash.slice(0, 2), hash);

describe('cache server on a disk store', () => {
  const small = Array.from({ length: 20 }, (_, i) => blob(`small blob ${i}`));
  const large = blob(randomBytes(6 * 1024 * 1024, 41));
  const action = blob(reapi.Action.encode({ doNotCache: false, salt: Buffer.from('disk') }));

  it('keeps every blob and action result across a restart', async () => {
    const first = await startTestServer({ storageDir: dir });
    await must(first.cas, first.cas.BatchUpdateBlobs, { requests: small.map((b) => ({ digest: b.digest, data: b.data })) });
    expect(await writeStream(first.bs, uploadRequests(uploadName(large.digest), large.data, 256 * 1024))).toMatchObject({ ok: true });
    await must(first.ac, first.ac.UpdateActionResult, {
      actionDigest: action.digest,
      actionResult: { outputFiles: [{ path: 'big', digest: large.digest }], exitCode: 0 },
    });
    await first.stop();

    const second = await startTestServer({ storageDir: dir });
    try {
      const missing = await must(second.cas, second.cas.FindMissingBlobs, { blobDigests: [...small, large].map((b) => b.digest) });
      expect(missing.missingBlobDigests).toEqual([]);
      const read = await must(second.cas, second.cas.BatchReadBlobs, { digests: small.map((b) => b.digest) });
      expect(read.responses.map((r) => r.data.toString())).toEqual(small.map((b) => b.data.toString()));
      const big = await readStream(second.bs, { resourceName: blobName(large.digest) });
      expect(big.ok && big.value.equals(large.data)).toBe(true);
      const result = await must(second.ac, second.ac.GetActionResult, { actionDigest: action.digest });
      expect(result.outputFiles[0]!.path).toBe('big');
    } finally {
      await second.stop();
    }
  });

  it('detects a corrupted blob file, never serves it, and reports it missing afterwards', async () => {
    const victim = small[3]!;
    const bigVictim = large;
    const t = await startTestServer({ storageDir: dir });
    try {
      // Same size, one byte changed: only the content hash can tell.
      const content = await readFile(blobFile(victim.digest.hash));
      content[0] = content[0]! ^ 0xff;
      await writeFile(blobFile(victim.digest.hash), content);
      const bigContent = await readFile(blobFile(bigVictim.digest.hash));
      bigContent[bigContent.length - 1] = bigContent[bigContent.length - 1]! ^ 0x01;
      await writeFile(blobFile(bigVictim.digest.hash), bigContent);

      const batch = await must(t.cas, t.cas.BatchReadBlobs, { digests: [victim.digest, small[4]!.digest] });
      expect(batch.responses.map((r) => r.status?.code)).toEqual([grpc.status.NOT_FOUND, 0]);
      expect(batch.responses[0]!.data.length).toBe(0);
      const stream = await readStream(t.bs, { resourceName: blobName(bigVictim.digest) });
      expect(stream).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });

      const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [victim.digest, bigVictim.digest, small[4]!.digest] });
      expect(missing.missingBlobDigests.map(digestKey).sort()).toEqual([digestKey(victim.digest), digestKey(bigVictim.digest)].sort());
      // The action result whose output was corrupt is a miss now.
      const result = await new Promise<grpc.status>((resolve) =>
        t.ac.GetActionResult({ actionDigest: action.digest }, (err) => resolve(err ? err.code : grpc.status.OK)),
      );
      expect(result).toBe(grpc.status.NOT_FOUND);
      // A client can upload it again.
      const again = await must(t.cas, t.cas.BatchUpdateBlobs, { requests: [{ digest: victim.digest, data: victim.data }] });
      expect(again.responses[0]!.status?.code).toBe(0);
      expect((await readFile(blobFile(victim.digest.hash))).equals(victim.data)).toBe(true);
    } finally {
      await t.stop();
    }
  });

  it('after a restart, FindMissingBlobs reports a blob corrupted on disk as missing (checked, deleted), and its read fails cleanly', async () => {
    const victim = blob('rotted while the server was down');
    const healthy = blob('still fine after the restart');
    const first = await startTestServer({ storageDir: dir });
    await must(first.cas, first.cas.BatchUpdateBlobs, { requests: [victim, healthy].map((b) => ({ digest: b.digest, data: b.data })) });
    await first.stop();
    const content = await readFile(blobFile(victim.digest.hash));
    content[0] = content[0]! ^ 0xff; // same size: only the hash can tell
    await writeFile(blobFile(victim.digest.hash), content);

    const t = await startTestServer({ storageDir: dir });
    try {
      // Asked first, before any read: a blob said present must be readable.
      const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [victim.digest, healthy.digest] });
      expect(missing.missingBlobDigests.map(digestKey)).toEqual([digestKey(victim.digest)]);
      const read = await readStream(t.bs, { resourceName: blobName(victim.digest) });
      expect(read).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
      const again = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [victim.digest, healthy.digest] });
      expect(again.missingBlobDigests.map(digestKey)).toEqual([digestKey(victim.digest)]);
      const good = await readStream(t.bs, { resourceName: blobName(healthy.digest) });
      expect(good.ok && good.value.equals(healthy.data)).toBe(true);
    } finally {
      await t.stop();
    }
  });

  it('drops an action-cache file whose bytes changed, even when they still decode, and serves no result from it', async () => {
    const acAction = blob(reapi.Action.encode({ doNotCache: false, salt: Buffer.from('ac corruption') }));
    const acFile = join(dir, 'ac', acAction.digest.hash.slice(0, 2), acAction.digest.hash);
    const t = await startTestServer({ storageDir: dir });
    try {
      await must(t.ac, t.ac.UpdateActionResult, { actionDigest: acAction.digest, actionResult: { exitCode: 3, stdoutRaw: Buffer.from('out') } });
      expect((await must(t.ac, t.ac.GetActionResult, { actionDigest: acAction.digest })).exitCode).toBe(3);
      // exit_code 3 -> 4: still a valid ActionResult, referring to nothing, so only a checksum can tell.
      const stored = await readFile(acFile);
      const at = stored.indexOf(Buffer.from([0x20, 0x03]));
      expect(at).toBeGreaterThanOrEqual(0);
      stored[at + 1] = 0x04;
      expect(reapi.ActionResult.decode(stored.subarray(0, stored.length - 36)).exitCode).toBe(4);
      await writeFile(acFile, stored);
      const code = await new Promise<grpc.status>((resolve) =>
        t.ac.GetActionResult({ actionDigest: acAction.digest }, (err) => resolve(err ? err.code : grpc.status.OK)),
      );
      expect(code).toBe(grpc.status.NOT_FOUND);
      await expect(readFile(acFile)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await t.stop();
    }
  });
});
