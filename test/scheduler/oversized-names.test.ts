import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, grpc, startTestServer, type Outcome, type TestServer } from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { instanceNames: ['', 'team/ci'] } });
});
afterAll(() => t.stop());

/** The outcome, or 'no answer' when the server has not answered within the time a client would wait. */
function within<T>(ms: number, outcome: Promise<T>): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'no answer'>((resolve) => (timer = setTimeout(() => resolve('no answer'), ms)));
  return Promise.race([outcome, late]).finally(() => clearTimeout(timer));
}

// A name echoed whole in the status message overflows the HTTP/2 trailers: the client then never
// sees an answer and waits for its deadline. The answer must come at once, with the name cut short.
describe('instance names of 100 KB', () => {
  const huge = 'a'.repeat(100_000);
  it.each([
    ['unknown', huge],
    ['with an empty segment', `${huge}//x`],
    ['with a reserved segment', `${huge}/blobs`],
  ])('an %s one is INVALID_ARGUMENT at once, with a short message', async (_kind, instanceName) => {
    const requests: Promise<Outcome<unknown>>[] = [
      call(t.caps, t.caps.GetCapabilities, { instanceName }),
      call(t.cas, t.cas.FindMissingBlobs, { instanceName, blobDigests: [] }),
    ];
    for (const request of requests) {
      const outcome = await within(5000, request);
      expect(outcome).not.toBe('no answer');
      if (outcome === 'no answer' || outcome.ok) throw new Error('expected an error');
      expect(outcome.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(outcome.message.length).toBeLessThan(1000);
      expect(outcome.message).toContain('instance_name');
    }
  });
});
