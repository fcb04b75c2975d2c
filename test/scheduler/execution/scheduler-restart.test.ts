import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { googleRpc, grpcHealth, type longrunning, reapi, unpackAny } from '../../../src/core/index.js';
import { call, grpc } from '../cache-server-fixture.js';
import { healthClient } from '../health-fixture.js';
import { until } from '../../setup/until.js';
import { collectStream, execute, shCommand, startClusterForTest, type StreamOutcome, type TestCluster } from './cluster-fixture.js';

const { SERVING, NOT_SERVING } = grpcHealth.HealthCheckResponse_ServingStatus;

/** A cluster whose scheduler journals its operations and keeps its blobs on disk, so both survive `restartServer`. */
async function journaledCluster(extra: Record<string, number> = {}): Promise<{ cluster: TestCluster; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-restart-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const cluster = await startClusterForTest({ operationsFile: join(dir, 'operations.jsonl'), ...extra }, { storageDir: join(dir, 'store') });
  return { cluster, dir };
}

/** Starts Execute and resolves with the operation's name once the stream named it (and the stream's outcome, later). */
function startExecute(cluster: TestCluster, request: reapi.ExecuteRequestInit): { name: Promise<string>; outcome: Promise<StreamOutcome> } {
  const stream = cluster.exec.Execute(request) as grpc.ClientReadableStream<longrunning.Operation>;
  const name = new Promise<string>((resolve) => stream.once('data', (op: longrunning.Operation) => resolve(op.name)));
  return { name, outcome: collectStream(stream) };
}

/** WaitExecution as a client retrying after the restart does: waiting for the server to be back. */
function waitExecution(cluster: TestCluster, name: string): Promise<StreamOutcome> {
  const metadata = new grpc.Metadata({ waitForReady: true });
  return collectStream(cluster.exec.WaitExecution({ name }, metadata) as grpc.ClientReadableStream<longrunning.Operation>);
}

describe('a scheduler restarted with an operations journal', () => {
  it('answers WaitExecution for an operation that finished before the restart with its result', async () => {
    const { cluster } = await journaledCluster();
    await cluster.addExecutor({ slots: 1 });
    const actionDigest = await cluster.action(shCommand('echo kept > out', { outputPaths: ['out'] }));
    const started = startExecute(cluster, { actionDigest });
    const name = await started.name;
    const before = (await started.outcome).response;
    expect(before?.result?.exitCode).toBe(0);
    await cluster.restartServer();
    const after = await waitExecution(cluster, name);
    expect(after.error).toBeUndefined();
    expect(after.last?.done).toBe(true);
    expect(after.response?.result?.outputFiles).toEqual(before?.result?.outputFiles);
  });

  it('runs an unfinished operation again after the restart, and its client gets the result through WaitExecution', async () => {
    const { cluster } = await journaledCluster();
    // No executor yet: the operation is queued when the scheduler stops.
    const actionDigest = await cluster.action(shCommand('echo again > out', { outputPaths: ['out'] }));
    const started = startExecute(cluster, { actionDigest });
    const name = await started.name;
    await cluster.restartServer();
    // The old stream was cut with UNAVAILABLE: what REAPI clients retry with WaitExecution.
    expect((await started.outcome).error?.code).toBe(grpc.status.UNAVAILABLE);
    const waited = waitExecution(cluster, name);
    await cluster.addExecutor({ slots: 1 });
    const outcome = await waited;
    expect(outcome.error).toBeUndefined();
    expect(outcome.response?.status?.code ?? googleRpc.Code.OK).toBe(googleRpc.Code.OK);
    expect(outcome.response?.result?.exitCode).toBe(0);
  });

  it('takes the result of an action that kept running on its executor across the restart: it runs once', async () => {
    const { cluster, dir } = await journaledCluster();
    const runs = join(dir, 'runs');
    const executor = await cluster.addExecutor({ slots: 1 });
    const actionDigest = await cluster.action(shCommand(`echo run >> ${runs}; sleep 1; echo done > out`, { outputPaths: ['out'] }));
    const started = startExecute(cluster, { actionDigest });
    const name = await started.name;
    await until(() => executor.runningTasks > 0, 'the action to run');
    await cluster.restartServer();
    const outcome = await waitExecution(cluster, name);
    expect(outcome.error).toBeUndefined();
    expect(outcome.response?.result?.exitCode).toBe(0);
    expect(await readFile(runs, 'utf8')).toBe('run\n');
  });

  it('ends an unfinished operation whose action is gone from the CAS with the error Execute would give', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-restart-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    // The CAS in memory: lost with the restart, while the journal is kept.
    const cluster = await startClusterForTest({ operationsFile: join(dir, 'operations.jsonl') });
    const actionDigest = await cluster.action(shCommand('true'));
    const started = startExecute(cluster, { actionDigest });
    const name = await started.name;
    await cluster.restartServer();
    const outcome = await waitExecution(cluster, name);
    expect(outcome.last?.done).toBe(true);
    expect(outcome.response?.status?.code).toBe(googleRpc.Code.FAILED_PRECONDITION);
  });
});

describe('a draining scheduler', () => {
  it('reports NOT_SERVING for every service, refuses new Execute calls with UNAVAILABLE, and lets the running action finish for its client', async () => {
    const cluster = await startClusterForTest();
    const executor = await cluster.addExecutor({ slots: 1 });
    const running = await cluster.action(shCommand('sleep 1; echo finished > out', { outputPaths: ['out'] }));
    const started = startExecute(cluster, { actionDigest: running });
    await started.name;
    await until(() => executor.runningTasks > 0, 'the action to run');
    const health = healthClient(cluster.address);
    onTestFinished(() => (health as unknown as grpc.Client).close());
    expect(await call(health as unknown as grpc.Client, health.Check, { service: 'build.bazel.remote.execution.v2.Execution' })).toMatchObject({
      ok: true,
      value: { status: SERVING },
    });

    // A Watch per service hears the change (and stays open while the drain lasts).
    const watches = ['', ...cluster.server.services].map((service) => {
      const statuses: number[] = [];
      const stream = health.Watch({ service });
      let first!: () => void;
      const firstStatus = new Promise<void>((resolve) => (first = resolve));
      const notServing = new Promise<void>((resolve) =>
        stream.on('data', (r: grpcHealth.HealthCheckResponse) => {
          statuses.push(r.status);
          first();
          if (r.status === NOT_SERVING) resolve();
        }),
      );
      stream.on('error', () => undefined);
      return { service, statuses, firstStatus, notServing, stream };
    });
    for (const watch of watches) await watch.firstStatus;
    cluster.server.health.drain();
    const drained = cluster.execution.drain(30_000);
    for (const watch of watches) {
      await watch.notServing;
      expect(watch.statuses, watch.service).toEqual([SERVING, NOT_SERVING]);
      watch.stream.cancel();
    }
    for (const service of ['', ...cluster.server.services]) {
      const checked = await call(health as unknown as grpc.Client, health.Check, { service });
      expect(checked, service).toMatchObject({ ok: true, value: { status: NOT_SERVING } });
    }
    const refused = await execute(cluster, { actionDigest: await cluster.action(shCommand('true')) });
    expect(refused.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(refused.error?.details).toMatch(/shutting down/);
    expect(await drained).toBe(0);
    const outcome = await started.outcome;
    expect(outcome.response?.result?.exitCode).toBe(0);
    expect(unpackAny(reapi.ExecuteOperationMetadata, outcome.last!.metadata!)?.stage).toBe(reapi.ExecutionStage_Value.COMPLETED);
  });

  it('cuts the streams of actions still running after the grace with UNAVAILABLE, and says how many', async () => {
    const cluster = await startClusterForTest();
    const executor = await cluster.addExecutor({ slots: 1 });
    const started = startExecute(cluster, { actionDigest: await cluster.action(shCommand('sleep 30')) });
    await started.name;
    await until(() => executor.runningTasks > 0, 'the action to run');
    expect(await cluster.execution.drain(200)).toBe(1);
    expect((await started.outcome).error?.code).toBe(grpc.status.UNAVAILABLE);
  });
});
