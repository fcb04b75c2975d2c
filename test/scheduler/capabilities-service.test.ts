import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapi } from '../../src/core/index.js';
import { call, grpc, must, startTestServer, type TestServer } from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { instanceNames: ['', 'team/ci'], limits: { maxBatchTotalSizeBytes: 2 * 1024 * 1024 } } });
});
afterAll(() => t.stop());

describe('Capabilities.GetCapabilities', () => {
  it('declares SHA256, the batch limit, zstd, action cache updates, split/splice with FastCDC 2020 and API 2.0..2.12', async () => {
    const caps = await must(t.caps, t.caps.GetCapabilities, { instanceName: '' });
    const cache = caps.cacheCapabilities!;
    expect(cache.digestFunctions).toEqual([reapi.DigestFunction_Value.SHA256]);
    expect(cache.maxBatchTotalSizeBytes).toBe(2 * 1024 * 1024);
    expect(cache.supportedCompressors).toEqual([reapi.Compressor_Value.ZSTD]);
    expect(cache.supportedBatchUpdateCompressors).toEqual([reapi.Compressor_Value.ZSTD]);
    expect(cache.actionCacheUpdateCapabilities?.updateEnabled).toBe(true);
    expect(cache.symlinkAbsolutePathStrategy).toBe(reapi.SymlinkAbsolutePathStrategy_Value.ALLOWED);
    expect([cache.splitBlobSupport, cache.spliceBlobSupport]).toEqual([true, true]);
    expect(cache.fastCdc2020Params).toMatchObject({ avgChunkSizeBytes: 512 * 1024, seed: 0 });
    expect(caps.lowApiVersion).toMatchObject({ major: 2, minor: 0, patch: 0 });
    expect(caps.highApiVersion).toMatchObject({ major: 2, minor: 12, patch: 0 });
    // A cache-only server says nothing about execution.
    expect(caps.executionCapabilities).toBeNull();
  });

  it('answers for every configured instance', async () => {
    const caps = await must(t.caps, t.caps.GetCapabilities, { instanceName: 'team/ci' });
    expect(caps.cacheCapabilities?.digestFunctions).toEqual([reapi.DigestFunction_Value.SHA256]);
  });

  it.each(['blobs', 'team/uploads', 'actions', 'actionResults', 'operations', 'capabilities', 'x/compressed-blobs/y'])(
    'rejects the reserved segment in instance name %j with INVALID_ARGUMENT',
    async (instanceName) => {
      const outcome = await call(t.caps, t.caps.GetCapabilities, { instanceName });
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) {
        expect(outcome.code).toBe(grpc.status.INVALID_ARGUMENT);
        expect(outcome.message).toMatch(/instance_name: .*reserved segment/);
      }
    },
  );

  it('rejects an instance name the server does not serve, listing the ones it does', async () => {
    const outcome = await call(t.caps, t.caps.GetCapabilities, { instanceName: 'other' });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!outcome.ok) expect(outcome.message).toContain('"team/ci"');
  });
});
