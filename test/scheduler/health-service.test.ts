import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { grpcHealth } from '../../src/core/index.js';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { blob, call, connect, grpc } from './cache-server-fixture.js';
import { healthClient, watchUntilEnd } from './health-fixture.js';

const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = grpcHealth.HealthCheckResponse_ServingStatus;
const log = { info: () => undefined, warn: () => undefined };
const addressOf = (server: CacheServer): string => `127.0.0.1:${server.port}`;

describe('grpc.health.v1.Health on the cache server port', () => {
  let server: CacheServer | undefined;
  let dir: string | undefined;
  const clients: grpc.Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.close();
    server = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function start(config: Record<string, unknown> = {}, baseDir = process.cwd()): Promise<CacheServer> {
    server = await startCacheServer(parseCacheServerConfig(config, 'test config', baseDir, { host: '127.0.0.1', port: 0 }), { log });
    return server;
  }
  const client = (address: string) => {
    const c = healthClient(address);
    clients.push(c as unknown as grpc.Client);
    return c;
  };

  it('says SERVING for the server and each service once listening, NOT_FOUND for an unknown service', async () => {
    const s = await start();
    const health = client(addressOf(s));
    for (const service of ['', 'build.bazel.remote.execution.v2.ContentAddressableStorage', 'google.bytestream.ByteStream', 'grpc.health.v1.Health']) {
      const outcome = await call(health as unknown as grpc.Client, health.Check, { service });
      expect(outcome, service).toEqual({ ok: true, value: expect.objectContaining({ status: SERVING }) });
    }
    const unknown = await call(health as unknown as grpc.Client, health.Check, { service: 'no.such.Service' });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) {
      expect(unknown.code).toBe(grpc.status.NOT_FOUND);
      expect(unknown.message).toContain('no.such.Service');
    }
    const list = await call(health as unknown as grpc.Client, health.List, {});
    expect(list.ok).toBe(true);
    if (list.ok) {
      expect(Object.keys(list.value.statuses).sort()).toEqual(['', ...s.services].sort());
      expect(Object.values(list.value.statuses).every((r) => r.status === SERVING)).toBe(true);
    }
  });

  it('Watch sends the current status, then NOT_SERVING when the server drains, and ends with OK', async () => {
    const s = await start();
    const health = client(addressOf(s));
    let first!: () => void;
    const gotFirst = new Promise<void>((resolve) => (first = resolve));
    const watched = watchUntilEnd(health, '', () => first());
    await gotFirst;
    const closed = s.close();
    server = undefined;
    const { statuses, code } = await watched;
    await closed;
    expect(statuses).toEqual([SERVING, NOT_SERVING]);
    expect(code).toBe(grpc.status.OK);
  });

  it('Watch of an unknown service says SERVICE_UNKNOWN without ending the call', async () => {
    const s = await start();
    const health = client(addressOf(s));
    const stream = health.Watch({ service: 'no.such.Service' });
    const firstStatus = await new Promise<number>((resolve) => stream.once('data', (r: grpcHealth.HealthCheckResponse) => resolve(r.status)));
    expect(firstStatus).toBe(SERVICE_UNKNOWN);
    // Still open: the status arrives only when the stream is cancelled by us.
    const ended = new Promise<grpc.status>((resolve) => stream.on('error', (e: grpc.ServiceError) => resolve(e.code)));
    stream.cancel();
    expect(await ended).toBe(grpc.status.CANCELLED);
  });

  it('answers without credentials when auth is on, where every other call is UNAUTHENTICATED', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-health-'));
    await writeFile(join(dir, 'tokens.txt'), `${'0'.repeat(64)} ci\n`);
    const s = await start({ auth: { tokenFile: 'tokens.txt', roles: { 'token:ci': { '*': 'cache-writer' } } } }, dir);
    const health = client(addressOf(s));
    const checked = await call(health as unknown as grpc.Client, health.Check, { service: '' });
    expect(checked).toEqual({ ok: true, value: expect.objectContaining({ status: SERVING }) });
    const cache = connect(s.endpoint);
    try {
      const write = await call(cache.cas, cache.cas.BatchUpdateBlobs, { instanceName: '', requests: [blob('x')] });
      expect(write.ok ? grpc.status.OK : write.code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      cache.close();
    }
  });

  it('healthPort serves the health service alone, in plaintext, with the same statuses', async () => {
    const s = await start({ healthPort: 0 });
    expect(s.healthPort).toBeGreaterThan(0);
    expect(s.healthPort).not.toBe(s.port);
    const health = client(`127.0.0.1:${s.healthPort}`);
    const checked = await call(health as unknown as grpc.Client, health.Check, { service: 'build.bazel.remote.execution.v2.ActionCache' });
    expect(checked).toEqual({ ok: true, value: expect.objectContaining({ status: SERVING }) });
    const cache = connect(`grpc://127.0.0.1:${s.healthPort}`);
    try {
      const caps = await call(cache.caps, cache.caps.GetCapabilities, { instanceName: '' });
      expect(caps.ok ? grpc.status.OK : caps.code).toBe(grpc.status.UNIMPLEMENTED);
    } finally {
      cache.close();
    }
  });

  it('refuses a healthPort out of range, naming the field', () => {
    expect(() => parseCacheServerConfig({ healthPort: 70000 }, 'x.json', process.cwd())).toThrow(/x\.json: healthPort/);
  });
});
