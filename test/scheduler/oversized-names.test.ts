import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blob, call, grpc, must, startTestServer, type Outcome, type TestServer } from './cache-server-fixture.js';

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

// The same for ByteStream resource names: an echoed 100 KB name left the client without a status,
// and the connection's later Reads hung. Now the status arrives, cut short, and the connection serves on.
describe('ByteStream resource names of 100 KB', () => {
  const huge = 'x'.repeat(100_000);
  const readOutcome = (resourceName: string) =>
    new Promise<{ code: grpc.status; message: string; bytes: number }>((resolve) => {
      let bytes = 0;
      const stream = t.bs.Read({ resourceName, readOffset: 0, readLimit: 0 }, new grpc.Metadata(), { deadline: Date.now() + 5000 });
      stream.on('data', (r: { data: Uint8Array }) => (bytes += r.data.length));
      stream.on('error', (e: grpc.ServiceError) => resolve({ code: e.code, message: e.details, bytes }));
      stream.on('end', () => resolve({ code: grpc.status.OK, message: '', bytes }));
    });

  it.each([
    ['as the instance name', `${huge}/blobs/${'0'.repeat(64)}/1`],
    ['as a segment after the size', `blobs/${'0'.repeat(64)}/1/${huge}`],
    ['as the compressor', `compressed-blobs/${huge}/${'0'.repeat(64)}/1`],
  ])('%s: a Read gets INVALID_ARGUMENT with a short message, and a Read after it on the connection works', async (_where, resourceName) => {
    const failed = await readOutcome(resourceName);
    expect(failed.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(failed.message.length).toBeLessThan(1100);
    expect(failed.message).toContain('resource_name');
    const stored = blob(`after a ${resourceName.length}-character name`);
    await must(t.cas, t.cas.BatchUpdateBlobs, { instanceName: '', requests: [{ digest: stored.digest, data: stored.data }] });
    const after = await readOutcome(`blobs/${stored.digest.hash}/${stored.digest.sizeBytes}`);
    expect(after).toEqual({ code: grpc.status.OK, message: '', bytes: stored.data.length });
  });

  it('a Write naming one gets INVALID_ARGUMENT with a short message', async () => {
    const outcome = await new Promise<grpc.ServiceError | null>((resolve) => {
      const stream = t.bs.Write(new grpc.Metadata(), { deadline: Date.now() + 5000 }, (e: grpc.ServiceError | null) => resolve(e));
      stream.write({ resourceName: `uploads/${huge}`, writeOffset: 0, finishWrite: true, data: Buffer.from('x') });
      stream.end();
    });
    expect(outcome?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(outcome!.details.length).toBeLessThan(1100);
  });
});
