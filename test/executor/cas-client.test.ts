import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CasClient } from '../../executor/index.js';
import { digestKey, digestOf } from '../../src/core/index.js';
import { isRemoteCallError } from '../../src/remote/index.js';
import { type HostileReapiServer, startHostileReapiServer } from '../remote/hostile-reapi-server.js';

// The executor reads and writes the scheduler's CAS through Kiln's one REAPI client: these pin what
// that gives it over the executor's former client of its own (fixed batches, no capabilities, every
// code but two turned into INTERNAL, no deadline).
let server: HostileReapiServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(): Promise<{ server: HostileReapiServer; cas: CasClient }> {
  server = await startHostileReapiServer();
  const cas = new CasClient({ scheduler: server.url, instanceName: '' });
  return { server, cas };
}

const codeOf = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return isRemoteCallError(e) ? grpc.status[e.code] : String(e);
};

describe("the executor's CAS client", () => {
  it('reads small blobs in one batch and a blob above the advertised batch limit over ByteStream, each checked', async () => {
    const { server, cas } = await start();
    server.capabilities = { ...server.capabilities, cacheCapabilities: { ...server.capabilities.cacheCapabilities, maxBatchTotalSizeBytes: 64 * 1024 } };
    const small = [server.put('a'), server.put('b')];
    const large = server.put(Buffer.alloc(100 * 1024, 'l'));
    const blobs = await cas.getMany([...small, large, small[0]!]);
    expect([...blobs.keys()].sort()).toEqual([...small, large].map(digestKey).sort());
    expect(server.requests.BatchReadBlobs).toHaveLength(1);
    expect(server.requests.Read).toHaveLength(1);
    cas.close();
  });

  it('passes the server codes through: NOT_FOUND for a missing blob, DATA_LOSS for a corrupt one, UNAVAILABLE retried', async () => {
    const { server, cas } = await start();
    expect(await codeOf(cas.get(digestOf(Buffer.from('never stored'))))).toBe('NOT_FOUND');
    const corrupt = server.put('the real bytes');
    server.cas.set(digestKey(corrupt), Buffer.from('the fake bytes'));
    expect(await codeOf(cas.get(corrupt))).toBe('DATA_LOSS');
    const fine = server.put('fine');
    server.script('BatchReadBlobs', [{ kind: 'fail', code: grpc.status.UNAVAILABLE }]);
    expect((await cas.get(fine)).toString()).toBe('fine');
    cas.close();
  });

  it('streams a download into a new file, and refuses to overwrite one', async () => {
    const { server, cas } = await start();
    const dir = mkdtempSync(join(tmpdir(), 'kiln-cas-client-'));
    dirs.push(dir);
    const data = Buffer.alloc(5 * 1024 * 1024, 'd');
    const digest = server.put(data);
    await cas.download(digest, join(dir, 'f'));
    expect(readFileSync(join(dir, 'f')).equals(data)).toBe(true);
    await expect(cas.download(digest, join(dir, 'f'))).rejects.toThrow(/EEXIST/);
    cas.close();
  });

  it('sends a few small outputs without asking, asks FindMissingBlobs for more, and asks again each time', async () => {
    const { server, cas } = await start();
    const small = Buffer.from('an output');
    await cas.uploadMissing([digestOf(small)], async () => small);
    expect(server.requests.FindMissingBlobs).toHaveLength(0);
    expect(server.cas.get(digestKey(digestOf(small)))?.equals(small)).toBe(true);
    const big = Buffer.alloc(200 * 1024, 'o');
    await cas.uploadMissing([digestOf(big)], async () => big);
    await cas.uploadMissing([digestOf(big)], async () => big);
    // The CAS may evict between two actions: an executor that ran for days asks again.
    expect(server.requests.FindMissingBlobs).toHaveLength(2);
    cas.close();
  });

  it('gives up on a stalled call within its deadline and retries, with DEADLINE_EXCEEDED', async () => {
    server = await startHostileReapiServer();
    const cas = new CasClient({ scheduler: server.url, instanceName: '', timeoutMs: 300, retries: 1 });
    server.script('BatchReadBlobs', () => ({ kind: 'stall' }));
    const started = performance.now();
    expect(await codeOf(cas.get(server.put('stalled')))).toBe('DEADLINE_EXCEEDED');
    // Two calls of 300 ms and one backoff of at most 5 s (the former client waited for ever).
    expect(server.requests.BatchReadBlobs).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(6_000);
    cas.close();
  });
});
