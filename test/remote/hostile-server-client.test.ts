import * as grpc from '@grpc/grpc-js';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestKey, digestOf, parseDigest, reapi, type Digest } from '../../src/core/index.js';
import { parseRemoteEndpoint, RemoteCallError, RemoteClient } from '../../src/remote/index.js';
import { startHostileReapiServer, zeros, type HostileMethod, type HostileReapiServer } from './hostile-reapi-server.js';

// Nothing a server does may hang the client or make it hold more than a blob's digest allows.
// Each call is bounded: (retries + 1) x remote_timeout + retries x remote_retry_max_delay.
const TIMEOUT_MS = 1000;
const RETRIES = 1;
const MAX_DELAY_MS = 300;
const BOUND_MS = (RETRIES + 1) * TIMEOUT_MS + RETRIES * MAX_DELAY_MS;
/** Scheduling slack on a shared machine. */
const MARGIN_MS = 1500;

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv', buildRequestId: 'req' };
let server: HostileReapiServer;
let client: RemoteClient | undefined;
const temps: string[] = [];
afterEach(async () => {
  client?.close();
  client = undefined;
  await server?.close();
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function start(options: { executor?: boolean; batchLimit?: number } = {}): Promise<RemoteClient> {
  server = await startHostileReapiServer();
  // A small batch limit: blobs above 512 bytes go over ByteStream.
  server.capabilities = {
    ...server.capabilities,
    cacheCapabilities: { ...server.capabilities.cacheCapabilities, maxBatchTotalSizeBytes: options.batchLimit ?? 2048 },
  };
  const endpoint = parseRemoteEndpoint(server.url, '--remote_executor');
  client = new RemoteClient({
    ...(options.executor === false ? { cache: endpoint } : { executor: endpoint }),
    instanceName: '',
    timeoutMs: TIMEOUT_MS,
    retries: RETRIES,
    retryMaxDelayMs: MAX_DELAY_MS,
    identity,
  });
  return client;
}

/** The call's outcome and how long it took. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value?: T; error?: RemoteCallError }> {
  const started = performance.now();
  try {
    const value = await call();
    return { ms: performance.now() - started, value };
  } catch (e) {
    if (!(e instanceof RemoteCallError)) throw e;
    return { ms: performance.now() - started, error: e };
  }
}

const big = Buffer.alloc(200_000, 'b');
const small = Buffer.from('a small blob');
const noReupload = async () => undefined;

/** Each method's call through the client, with what the server must hold for it. */
const calls: Record<Exclude<HostileMethod, 'QueryWriteStatus'>, (c: RemoteClient) => Promise<unknown>> = {
  GetCapabilities: (c) => c.capabilities(),
  GetActionResult: (c) => c.getActionResult(digestOf(small)),
  UpdateActionResult: (c) => c.updateActionResult(digestOf(small), { exitCode: 0 }),
  FindMissingBlobs: (c) => c.uploadMissing([{ digest: digestOf(small), data: async () => small }]),
  BatchUpdateBlobs: (c) => c.uploadMissing([{ digest: digestOf(small), data: async () => small }]),
  BatchReadBlobs: (c) => (server.put(small), c.read(digestOf(small))),
  Read: (c) => (server.put(big), c.read(digestOf(big))),
  Write: (c) => c.uploadMissing([{ digest: digestOf(big), data: async () => big }]),
  Execute: (c) => (
    server.executeResults.set(digestKey(digestOf(small)), { exitCode: 0 }), c.execute(digestOf(small), { skipCacheLookup: false, reupload: noReupload })
  ),
  WaitExecution: (c) => {
    // Execute hands out an operation and breaks: the client goes on with WaitExecution (and when the
    // server does not know the operation, executes again, answered by default).
    server.executeResults.set(digestKey(digestOf(small)), { exitCode: 0 });
    server.script('Execute', [{ kind: 'operations', operations: [{ name: 'operations/w', done: false }], then: { code: grpc.status.UNAVAILABLE } }]);
    return c.execute(digestOf(small), { skipCacheLookup: false, reupload: noReupload });
  },
};
const CALL_NAMES: Record<keyof typeof calls, RegExp> = {
  GetCapabilities: /capabilities/,
  GetActionResult: /GetActionResult/,
  UpdateActionResult: /UpdateActionResult/,
  FindMissingBlobs: /FindMissingBlobs/,
  BatchUpdateBlobs: /BatchUpdateBlobs/,
  BatchReadBlobs: /BatchReadBlobs/,
  Read: /ByteStream\.Read/,
  Write: /ByteStream\.Write/,
  Execute: /Execute on/,
  WaitExecution: /WaitExecution of operations\/w/,
};

describe('a server that stalls', () => {
  it.each(Object.keys(calls) as (keyof typeof calls)[])(
    'on %s: the call fails with DEADLINE_EXCEEDED naming the call and endpoint, within the bound',
    async (method) => {
      const c = await start();
      server.script(method, () => ({ kind: 'stall' }));
      const outcome = await timed(() => calls[method](c));
      expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(outcome.error?.message).toMatch(CALL_NAMES[method]);
      expect(outcome.error?.message).toContain(server.url);
      expect(outcome.error?.message).toContain(`gave up after ${RETRIES} retry`);
      expect(outcome.ms).toBeLessThan(BOUND_MS + MARGIN_MS);
      expect(server.requests[method].length).toBeGreaterThanOrEqual(RETRIES + 1);
    },
  );

  it.each(Object.keys(calls) as (keyof typeof calls)[])('once on %s: the retry succeeds', async (method) => {
    const c = await start();
    server.script(method, [{ kind: 'stall' }]);
    const outcome = await timed(() => calls[method](c));
    expect(outcome.error).toBeUndefined();
    expect(outcome.ms).toBeLessThan(TIMEOUT_MS + MAX_DELAY_MS + MARGIN_MS);
  });
});

describe('RESOURCE_EXHAUSTED with a RetryInfo of one hour', () => {
  const hour = { kind: 'fail', code: grpc.status.RESOURCE_EXHAUSTED, retryDelayMs: 3_600_000 } as const;

  it('is retried after at most --remote_retry_max_delay', async () => {
    const c = await start();
    server.script('GetActionResult', [hour]);
    server.actionCache.set(digestKey(digestOf(small)), { exitCode: 7 });
    const outcome = await timed(() => c.getActionResult(digestOf(small)));
    expect(outcome.value?.exitCode).toBe(7);
    expect(outcome.ms).toBeLessThan(MAX_DELAY_MS + MARGIN_MS);
  });

  it('every time: the call ends within the bound, the code kept', async () => {
    const c = await start();
    server.script('Read', () => hour);
    server.put(big);
    const outcome = await timed(() => c.read(digestOf(big)));
    expect(outcome.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(outcome.ms).toBeLessThan(RETRIES * MAX_DELAY_MS + MARGIN_MS);
  });
});

describe('UNAVAILABLE mid-stream', () => {
  it('on Read: the read resumes at the bytes received', async () => {
    const c = await start();
    server.put(big);
    server.script('Read', [{ kind: 'partial', bytes: 70_000, then: { code: grpc.status.UNAVAILABLE } }]);
    expect((await c.read(digestOf(big))).equals(big)).toBe(true);
    expect(server.requests.Read.map((r) => (r as { readOffset: number }).readOffset)).toEqual([0, 70_000]);
  });

  it('on Write: QueryWriteStatus says where, and the upload continues there', async () => {
    const c = await start();
    server.script('Write', [{ kind: 'partial', bytes: 65_536, then: { code: grpc.status.UNAVAILABLE } }]);
    await c.uploadMissing([{ digest: digestOf(big), data: async () => big }]);
    expect(server.cas.get(digestKey(digestOf(big)))?.equals(big)).toBe(true);
    expect(server.requests.QueryWriteStatus).toHaveLength(1);
    expect(server.requests.Write.map((r) => (r as { writeOffset: number }).writeOffset)).toEqual([0, 65_536]);
  });

  it('on Execute: WaitExecution on the operation finishes it', async () => {
    const c = await start();
    server.script('Execute', [{ kind: 'operations', operations: [{ name: 'operations/e1', done: false }], then: { code: grpc.status.UNAVAILABLE } }]);
    const response = reapi.ExecuteResponse.create({ result: { exitCode: 4 }, status: { code: 0, message: '' } });
    server.script('WaitExecution', [
      {
        kind: 'operations',
        operations: [
          {
            name: 'operations/e1',
            done: true,
            response: { typeUrl: 'type.googleapis.com/build.bazel.remote.execution.v2.ExecuteResponse', value: reapi.ExecuteResponse.encode(response) },
          },
        ],
        then: 'end',
      },
    ]);
    const outcome = await c.execute(digestOf(small), { skipCacheLookup: false, reupload: noReupload });
    expect(outcome.response.result?.exitCode).toBe(4);
    expect(server.requests.Execute).toHaveLength(1);
    expect(server.requests.WaitExecution).toEqual([expect.objectContaining({ name: 'operations/e1' })]);
  });
});

describe('claimed sizes and wrong blobs', () => {
  it('a digest size of 2^62 fails the answer at decoding, a negative one at the boundary', async () => {
    const c = await start();
    const huge = { hash: digestOf(small).hash, sizeBytes: 2 ** 62 };
    server.script('GetActionResult', [{ kind: 'answer', response: { exitCode: 0, stdoutDigest: huge } }]);
    const outcome = await timed(() => c.getActionResult(digestOf(small)));
    expect(outcome.error?.message).toMatch(/GetActionResult/);
    expect(outcome.error?.code).toBe(grpc.status.INTERNAL);
    expect(() => parseDigest({ hash: digestOf(small).hash, sizeBytes: -1 }, 'stdout/stderr digest')).toThrow(
      /stdout\/stderr digest: size_bytes must be a non-negative integer/,
    );
  });

  const cases: [string, Buffer[], RegExp][] = [
    ['short', [big.subarray(0, 1000)], /ended after 1000 of the digest's 200000 bytes/],
    ['long', [big, Buffer.from('x')], /more bytes than the digest's 200000/],
    ['mismatched', [Buffer.alloc(big.length, 'c')], /does not match its digest/],
  ];
  it.each(cases)('a %s blob is DATA_LOSS, read into memory or a file', async (_kind, chunks, message) => {
    const c = await start();
    server.script('Read', () => ({ kind: 'stream', chunks }));
    await expect(c.read(digestOf(big))).rejects.toMatchObject({ code: grpc.status.DATA_LOSS, message: expect.stringMatching(message) });
    const dir = await mkdtemp(join(tmpdir(), 'kiln-hostile-'));
    temps.push(dir);
    const file = await open(join(dir, 'out'), 'w');
    try {
      await expect(c.readToFile(digestOf(big), file)).rejects.toMatchObject({ code: grpc.status.DATA_LOSS, message: expect.stringMatching(message) });
    } finally {
      await file.close();
    }
  });

  it('readToFile streams into the file, resumed after a break, and read() refuses what it would have to hold above 64 MiB', async () => {
    const c = await start();
    const digest = server.put(big);
    server.script('Read', [{ kind: 'partial', bytes: 123_457, then: { code: grpc.status.UNAVAILABLE } }]);
    const dir = await mkdtemp(join(tmpdir(), 'kiln-hostile-'));
    temps.push(dir);
    const file = await open(join(dir, 'out'), 'w');
    await c.readToFile(digest, file).finally(() => file.close());
    expect((await readFile(join(dir, 'out'))).equals(big)).toBe(true);
    const claimed: Digest = { hash: digest.hash, sizeBytes: 6 * 1024 ** 3 };
    await expect(c.read(claimed)).rejects.toThrow(/larger than the 67108864 bytes Kiln reads into memory .*readToFile/);
  });

  it.skipIf(!process.platform.startsWith('linux'))('a claimed 6 GiB blob streamed to a file keeps the peak memory flat', async () => {
    const c = await start({ executor: false });
    const sixGiB = 6 * 1024 ** 3;
    const sent = 256 * 1024 * 1024;
    // The server claims 6 GiB and sends 256 MiB before it ends: the client must stream, never hold them.
    server.script('Read', () => ({ kind: 'stream', chunks: zeros(sent) }));
    const dir = await mkdtemp(join(tmpdir(), 'kiln-hostile-'));
    temps.push(dir);
    const file = await open(join(dir, 'out'), 'w');
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM (the peak resident set) to the present
    const before = kib('VmHWM');
    await expect(c.readToFile({ hash: digestOf(small).hash, sizeBytes: sixGiB }, file).finally(() => file.close())).rejects.toThrow(
      new RegExp(`ended after ${sent} of the digest's ${sixGiB} bytes`),
    );
    const grewMiB = (kib('VmHWM') - before) / 1024;
    // A client that buffered would have grown by 256 MiB at least.
    expect(grewMiB).toBeLessThan(96);
  });
});

function kib(field: string): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1]);
}
