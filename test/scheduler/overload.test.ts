import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blob, call, grpc, must, retryInfo, startTestServer, uploadName, type TestServer } from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { limits: { maxConcurrentRequests: 1, retryAfterMs: 1500 } } });
});
afterAll(() => t.stop());

describe('admission control', () => {
  it('answers RESOURCE_EXHAUSTED with RetryInfo while the request limit is reached, and serves again after', async () => {
    const b = blob('held open');
    // An upload stream that stays open holds the only request slot.
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const stream = t.bs.Write(() => finish());
    stream.write({ resourceName: uploadName(b.digest), writeOffset: 0, data: b.data.subarray(0, 3) });
    // Until the server has admitted the stream, other calls may still get through; then they are refused.
    let outcome = await call(t.cas, t.cas.FindMissingBlobs, { blobDigests: [b.digest] });
    for (let calls = 1; outcome.ok && calls < 10_000; calls++) outcome = await call(t.cas, t.cas.FindMissingBlobs, { blobDigests: [b.digest] });
    if (outcome.ok) throw new Error('the server admitted the held stream and still answered 10,000 calls');
    expect(outcome.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(outcome.message).toContain('server is busy');
    const info = retryInfo(outcome.metadata);
    expect(info?.retryDelay).toMatchObject({ seconds: 1, nanos: 500_000_000 });

    stream.write({ writeOffset: 3, data: b.data.subarray(3), finishWrite: true });
    stream.end();
    await done;
    const missing = await must(t.cas, t.cas.FindMissingBlobs, { blobDigests: [b.digest] });
    expect(missing.missingBlobDigests).toHaveLength(0);
  });
});
