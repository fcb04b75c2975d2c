import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startExecutor } from '../../executor/index.js';
import { googleRpc } from '../../src/core/index.js';
import { newMetricsRegistry, openMetricsPort } from '../../src/core/metrics/index.js';
import { execute, shCommand as sh, startClusterForTest } from './execution/cluster-fixture.js';
import { scrape, valueOf, type Sample } from './metrics-fixture.js';
import { until } from '../setup/until.js';

describe('Prometheus metrics of the scheduler (scraped over HTTP and parsed)', () => {
  it('change as an action queues, runs and is answered from the cache', async () => {
    const cluster = await startClusterForTest({}, { metrics: true });
    const url = cluster.server.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const before = await scrape(url);
    expect(valueOf(before, 'kiln_scheduler_queued_actions')).toBe(0);
    expect(valueOf(before, 'kiln_scheduler_actions_total')).toBe(0);

    const actionDigest = await cluster.action({ ...sh('tr a-z A-Z < in.txt > out.txt'), outputPaths: ['out.txt'] }, { 'in.txt': 'metrics\n' });
    // No executor yet: the action waits in its platform's queue.
    const first = execute(cluster, { instanceName: '', actionDigest });
    let queued: Sample[] = [];
    await until(async () => {
      queued = await scrape(url);
      return valueOf(queued, 'kiln_scheduler_queued_actions') === 1;
    }, 'the action queued');
    expect(queued.find((s) => s.name === 'kiln_scheduler_queued_actions' && s.value === 1)?.labels).toEqual({ platform: '' });
    expect(valueOf(queued, 'kiln_scheduler_oldest_queued_action_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(queued, 'kiln_scheduler_workers')).toBe(0);

    await cluster.addExecutor({ name: 'metrics-worker' });
    const outcome = await first;
    expect(outcome.response?.status?.code ?? 0).toBe(googleRpc.Code.OK);
    const after = await scrape(url);
    expect(valueOf(after, 'kiln_scheduler_queued_actions')).toBe(0);
    expect(valueOf(after, 'kiln_scheduler_actions_total', { outcome: 'success', cache_result: 'miss' })).toBe(1);
    for (const stage of ['queued', 'input_fetch', 'execution', 'output_upload']) {
      expect(valueOf(after, 'kiln_scheduler_action_stage_duration_seconds_count', { stage }), stage).toBe(1);
    }
    // It waited at least as long as it took us to see it queued and start a worker.
    expect(valueOf(after, 'kiln_scheduler_action_stage_duration_seconds_sum', { stage: 'queued' })).toBeGreaterThan(0);
    expect(valueOf(after, 'kiln_scheduler_workers', { state: 'idle' }) + valueOf(after, 'kiln_scheduler_workers', { state: 'busy' })).toBe(1);
    expect(valueOf(after, 'kiln_scheduler_worker_slots', { worker: 'metrics-worker' })).toBeGreaterThan(0);
    expect(after.some((s) => s.name === 'kiln_scheduler_worker_executing_actions' && s.labels['worker'] === 'metrics-worker')).toBe(true);
    expect(
      valueOf(after, 'kiln_grpc_server_handled_total', { grpc_service: 'build.bazel.remote.execution.v2.Execution', grpc_method: 'Execute', grpc_code: 'OK' }),
    ).toBe(1);
    expect(valueOf(after, 'kiln_grpc_server_handled_total', { grpc_method: 'BatchUpdateBlobs', grpc_code: 'OK' })).toBeGreaterThan(0);
    // The executor's outputs went through the CAS, its result into the action cache.
    expect(valueOf(after, 'kiln_blobstore_written_bytes_total', { backend: 'instance', storage: 'cas' })).toBeGreaterThan(0);
    expect(valueOf(after, 'kiln_blobstore_written_bytes_total', { backend: 'memory', storage: 'ac' })).toBeGreaterThan(0);
    expect(
      valueOf(after, 'kiln_blobstore_operations_duration_seconds_count', { backend: 'verifying', operation: 'put', storage: 'cas', grpc_code: 'OK' }),
    ).toBeGreaterThan(0);
    expect(valueOf(after, 'kiln_blobstore_stored_bytes', { backend: 'memory', storage: 'cas' })).toBeGreaterThan(0);
    const acMissesBefore = valueOf(after, 'kiln_blobstore_lookups_total', { backend: 'instance', storage: 'ac', result: 'miss' });
    expect(acMissesBefore).toBe(1);

    const second = await execute(cluster, { instanceName: '', actionDigest });
    expect(second.response?.cachedResult).toBe(true);
    const cached = await scrape(url);
    expect(valueOf(cached, 'kiln_scheduler_actions_total', { outcome: 'success', cache_result: 'hit' })).toBe(1);
    expect(valueOf(cached, 'kiln_blobstore_lookups_total', { backend: 'instance', storage: 'ac', result: 'hit' })).toBe(1);
    expect(valueOf(cached, 'kiln_blobstore_lookups_total', { backend: 'instance', storage: 'ac', result: 'miss' })).toBe(acMissesBefore);
  });

  it('counts actions that exit non-zero as failures', async () => {
    const cluster = await startClusterForTest({}, { metrics: true });
    await cluster.addExecutor();
    const actionDigest = await cluster.action(sh('exit 3'));
    const outcome = await execute(cluster, { instanceName: '', actionDigest });
    expect(outcome.response?.result?.exitCode).toBe(3);
    const samples = await scrape(cluster.server.metricsUrl!);
    expect(valueOf(samples, 'kiln_scheduler_actions_total', { outcome: 'failure', cache_result: 'miss' })).toBe(1);
  });
});

describe("an executor's metrics port", () => {
  it('counts the actions it runs and shows none in flight once they are done', async () => {
    const cluster = await startClusterForTest();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-executor-metrics-'));
    // A root executor's sandboxed actions run as nobody, which must reach their build directories.
    await chmod(dir, 0o711);
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const executor = await startExecutor(
      {
        scheduler: cluster.server.endpoint,
        instanceName: '',
        name: 'scraped',
        slots: 1,
        runner: 'local',
        workDirectory: join(dir, 'work'),
        cacheBytes: 1 << 20,
        platform: [],
        metricsPort: 0,
        healthHost: '127.0.0.1',
      },
      () => undefined,
    );
    onTestFinished(() => executor.stop());
    const url = executor.metricsUrl!;
    expect(valueOf(await scrape(url), 'kiln_executor_actions_total')).toBe(0);
    expect(valueOf(await scrape(url), 'kiln_executor_actions_in_flight', { worker: 'scraped' })).toBe(0);
    const actionDigest = await cluster.action({ ...sh('echo hi > out.txt'), outputPaths: ['out.txt'] });
    const outcome = await execute(cluster, { instanceName: '', actionDigest });
    expect(outcome.response?.result?.exitCode).toBe(0);
    const samples = await scrape(url);
    expect(valueOf(samples, 'kiln_executor_actions_total', { worker: 'scraped', outcome: 'success' })).toBe(1);
    expect(valueOf(samples, 'kiln_executor_actions_in_flight', { worker: 'scraped' })).toBe(0);
    expect(valueOf(samples, 'kiln_executor_action_stage_duration_seconds_count', { worker: 'scraped', stage: 'execution' })).toBe(1);
    expect(valueOf(samples, 'kiln_process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});

describe('the metrics port', () => {
  it('serves /metrics in the text format and nothing else', async () => {
    const registry = newMetricsRegistry({ processMetrics: true });
    const port = await openMetricsPort('127.0.0.1', 0, registry);
    try {
      const ok = await fetch(port.url);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toContain('text/plain');
      expect(await ok.text()).toContain('kiln_process_cpu_seconds_total');
      expect((await fetch(port.url.replace('/metrics', '/other'))).status).toBe(404);
      expect((await fetch(port.url, { method: 'POST' })).status).toBe(405);
    } finally {
      await port.close();
    }
  });
});
