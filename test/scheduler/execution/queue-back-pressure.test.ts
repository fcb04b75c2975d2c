import { describe, expect, it } from 'vitest';
import { googleRpc, unpackAny, type Digest } from '../../../src/core/index.js';
import { DEFAULT_BACKOFF, parseRemoteEndpoint, RemoteClient, Retrier } from '../../../src/remote/index.js';
import { parseSchedulerConfig } from '../../../scheduler/execution/index.js';
import { statusDetails } from '../cache-server-fixture.js';
import { execute, shCommand as sh, startClusterForTest } from './cluster-fixture.js';
import { until } from '../../setup/until.js';

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv-queue', buildRequestId: 'req-queue' };

describe('back-pressure of the platform queues (maxQueuedActionsPerPlatform)', () => {
  it('refuses an Execute beyond the bound with RESOURCE_EXHAUSTED and RetryInfo; an identical action joins, and room comes back', async () => {
    const cluster = await startClusterForTest({ maxQueuedActionsPerPlatform: 1, queueFullRetryAfterMs: 1500 });
    const a = await cluster.action(sh('echo a'));
    const b = await cluster.action(sh('echo b'));
    const first = execute(cluster, { instanceName: '', actionDigest: a });
    await until(() => cluster.execution.scheduler.queues().some((q) => q.length === 1), 'the first action queued');
    // The same action again joins the one queued: no new room needed.
    const joined = execute(cluster, { instanceName: '', actionDigest: a });
    const refused = await execute(cluster, { instanceName: '', actionDigest: b });
    expect(refused.error?.code).toBe(googleRpc.Code.RESOURCE_EXHAUSTED);
    expect(refused.error?.details).toMatch(/queue of platform .* is full \(1 actions queued, limit 1\)/);
    const status = statusDetails(refused.error!.metadata);
    const retry = unpackAny(googleRpc.RetryInfo, status!.details[0]!);
    expect(retry?.retryDelay).toEqual(expect.objectContaining({ seconds: 1, nanos: 500_000_000 }));

    // A worker appears: the queued action runs, and the refused one fits now.
    await cluster.addExecutor({ slots: 1 });
    expect((await first).response?.result?.exitCode).toBe(0);
    expect((await joined).response?.result?.exitCode).toBe(0);
    expect((await execute(cluster, { instanceName: '', actionDigest: b })).response?.result?.exitCode).toBe(0);
  });

  it("Kiln's client waits the RetryInfo delay, then its retry runs once a worker drained the queue", async () => {
    const cluster = await startClusterForTest({ maxQueuedActionsPerPlatform: 1, queueFullRetryAfterMs: 2500 });
    const a = await cluster.action(sh('echo a'));
    const b = await cluster.action(sh('echo b'));
    const first = execute(cluster, { instanceName: '', actionDigest: a });
    await until(() => cluster.execution.scheduler.queues().some((q) => q.length === 1), 'the first action queued');
    const delays: number[] = [];
    // The client's backoff alone would wait 100 ms; the server asks for 2.5 s. The test's sleep starts a
    // worker instead of waiting, so that the retry finds room.
    const retrier = new Retrier(
      { ...DEFAULT_BACKOFF, maxDelayMs: 60_000 },
      async (ms) => {
        delays.push(ms);
        await cluster.addExecutor({ slots: 1 });
        await first;
      },
      () => 0.5,
    );
    const endpoint = parseRemoteEndpoint(cluster.server.endpoint, 'remote_executor');
    const client = new RemoteClient({ executor: endpoint, instanceName: '', timeoutMs: 10_000, retries: 3, identity }, retrier);
    try {
      const outcome = await client.execute(b as Digest, { skipCacheLookup: false, reupload: async () => undefined });
      expect(outcome.response.result?.exitCode).toBe(0);
      expect(delays).toEqual([2500]);
    } finally {
      client.close();
    }
  });

  it('is read from the execution section', () => {
    const fail = (field: string, message: string): never => {
      throw new Error(`${field}: ${message}`);
    };
    const config = parseSchedulerConfig({ maxQueuedActionsPerPlatform: 100, queueFullRetryAfterMs: 250 }, fail);
    expect(config.maxQueuedActionsPerPlatform).toBe(100);
    expect(config.queueFullRetryAfterMs).toBe(250);
    expect(parseSchedulerConfig(undefined, fail).maxQueuedActionsPerPlatform).toBe(0);
    expect(() => parseSchedulerConfig({ maxQueuedActionsPerPlatform: -1 }, fail)).toThrow(/maxQueuedActionsPerPlatform/);
  });
});
