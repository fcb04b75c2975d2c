import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { grpcHealth } from '../../src/core/index.js';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { createExecutionServer } from '../../scheduler/execution/index.js';
import { startExecutor, type ExecutorConfig } from '../../executor/index.js';
import { call, type grpc } from '../scheduler/cache-server-fixture.js';
import { healthClient, watchUntilEnd } from '../scheduler/health-fixture.js';

const { SERVING, NOT_SERVING } = grpcHealth.HealthCheckResponse_ServingStatus;

describe("the executor's health port", () => {
  let dir: string;
  let server: CacheServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A scheduler (cache and execution halves) on a loopback port; with a token file when `auth`. */
  async function startScheduler(auth: boolean): Promise<CacheServer> {
    dir = await mkdtemp(join(tmpdir(), 'kiln-executor-health-'));
    await writeFile(join(dir, 'tokens.txt'), `${'0'.repeat(64)} ci\n`);
    const json = auth ? { auth: { tokenFile: 'tokens.txt', roles: { 'token:ci': { '*': 'worker' } } } } : {};
    const execution = createExecutionServer({ config: { stageUpdateDelayMs: 0 }, tickMs: 50 });
    server = await startCacheServer(parseCacheServerConfig(json, 'test config', dir, { host: '127.0.0.1', port: 0 }), {
      log: { info: () => undefined, warn: () => undefined },
      extraServices: (ctx) => execution.services(ctx),
      executionCapabilities: execution.capabilities,
    });
    return server;
  }

  const executorConfig = (scheduler: CacheServer): ExecutorConfig => ({
    scheduler: scheduler.endpoint,
    instanceName: '',
    name: 'probed',
    slots: 1,
    runner: 'local',
    workDirectory: join(dir, 'work'),
    cacheBytes: 1 << 20,
    platform: [],
    healthPort: 0,
    healthHost: '127.0.0.1',
  });

  it('is SERVING while the executor takes work, and a Watch hears NOT_SERVING when it stops', async () => {
    const executor = await startExecutor(executorConfig(await startScheduler(false)), () => undefined);
    const health = healthClient(`127.0.0.1:${executor.healthPort}`);
    try {
      const checked = await call(health as unknown as grpc.Client, health.Check, { service: '' });
      expect(checked).toEqual({ ok: true, value: expect.objectContaining({ status: SERVING }) });
      let first!: () => void;
      const gotFirst = new Promise<void>((resolve) => (first = resolve));
      const watched = watchUntilEnd(health, '', () => first());
      await gotFirst;
      await executor.stop();
      expect((await watched).statuses).toEqual([SERVING, NOT_SERVING]);
    } finally {
      health.close();
    }
  });

  it('turns NOT_SERVING as soon as it drains, while its port still answers', async () => {
    const executor = await startExecutor(executorConfig(await startScheduler(false)), () => undefined);
    const health = healthClient(`127.0.0.1:${executor.healthPort}`);
    try {
      const statuses: number[] = [];
      let heard!: () => void;
      let wanted = 1;
      const changed = () => new Promise<void>((resolve) => (heard = resolve));
      let next = changed();
      const stream = health.Watch({ service: '' });
      stream.on('data', (r: grpcHealth.HealthCheckResponse) => {
        statuses.push(r.status);
        if (statuses.length >= wanted) heard();
      });
      stream.on('error', () => undefined);
      await next;
      wanted = 2;
      next = changed();
      await executor.drain();
      await next;
      expect(statuses).toEqual([SERVING, NOT_SERVING]);
      const checked = await call(health as unknown as grpc.Client, health.Check, { service: '' });
      expect(checked).toEqual({ ok: true, value: expect.objectContaining({ status: NOT_SERVING }) });
      stream.cancel();
      await executor.stop();
    } finally {
      health.close();
    }
  });

  it('is NOT_SERVING once the scheduler refuses its credentials', async () => {
    const executor = await startExecutor(executorConfig(await startScheduler(true)), () => undefined);
    const health = healthClient(`127.0.0.1:${executor.healthPort}`);
    try {
      await executor.refused;
      const checked = await call(health as unknown as grpc.Client, health.Check, { service: '' });
      expect(checked).toEqual({ ok: true, value: expect.objectContaining({ status: NOT_SERVING }) });
    } finally {
      health.close();
      await executor.stop();
    }
  });
});
