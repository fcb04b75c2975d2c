import * as grpc from '@grpc/grpc-js';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { googleRpc, type Digest } from '../../../src/core/index.js';
import { execute, shCommand, startTestCluster, type TestCluster } from './cluster-fixture.js';
import { until } from '../../setup/until.js';

let cluster: TestCluster | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const sh = (script: string) => shCommand(script, { outputPaths: ['out'] });

describe('cluster faults and concurrency', () => {
  it('completes an action on another executor when its executor dies mid-action', async () => {
    cluster = await startTestCluster({ heartbeatIntervalMs: 300, heartbeatGraceMs: 200, maxSynchronizeWaitMs: 150 });
    const doomed = await cluster.addExecutor({ slots: 1, name: 'doomed' });
    const actionDigest = await cluster.action(sh('sleep 0.3; echo survived > out'));
    const outcome = execute(cluster, { instanceName: '', actionDigest });
    await until(() => doomed.runningTasks > 0, 'the action to run on the doomed executor');
    await doomed.stop(); // vanishes: no report, no more heartbeats
    await cluster.addExecutor({ slots: 1, name: 'survivor' });
    const { response } = await outcome;
    expect(response!.status?.code ?? 0).toBe(googleRpc.Code.OK);
    expect(response!.result!.exitCode).toBe(0);
    expect(response!.result!.executionMetadata!.worker).toBe('survivor');
    expect(response!.result!.outputFiles.map((f) => f.path)).toEqual(['out']);
  });

  it('survives a scheduler restart: the executor reconnects, a retried Execute succeeds', async () => {
    cluster = await startTestCluster({ heartbeatIntervalMs: 1000, heartbeatGraceMs: 500, maxSynchronizeWaitMs: 200 });
    const executor = await cluster.addExecutor({ slots: 1 });
    const slow = await cluster.action(sh('sleep 0.3; echo first > out'));
    const lost = execute(cluster, { instanceName: '', actionDigest: slow });
    await until(() => executor.runningTasks > 0, 'the action to run');
    await cluster.restartServer();
    // The stream broke with the old server; the client retries with Execute, as Bazel does.
    expect((await lost).error).toBeDefined();
    // The new scheduler lost the CAS (memory storage) too: upload again and retry.
    const again = await cluster.action(sh('sleep 0.3; echo first > out'));
    // Retried on UNAVAILABLE while the client's channel reconnects, as Bazel's retrier does.
    let retried = await execute(cluster, { instanceName: '', actionDigest: again });
    for (let attempt = 0; retried.error?.code === grpc.status.UNAVAILABLE && attempt < 50; attempt++) {
      await new Promise((r) => setTimeout(r, 100));
      retried = await execute(cluster, { instanceName: '', actionDigest: again });
    }
    expect(retried.error?.details).toBeUndefined();
    const { response } = retried;
    expect(response!.result!.exitCode).toBe(0);
    // Nothing of the old scheduler is left on the executor (its report was ignored or cancelled).
    await until(() => executor.runningTasks === 0, 'the executor to have no task');
  });

  it('fails with UNAVAILABLE once the retry limit is spent', async () => {
    cluster = await startTestCluster({ heartbeatIntervalMs: 200, heartbeatGraceMs: 100, maxSynchronizeWaitMs: 100, maxRetries: 0 });
    const doomed = await cluster.addExecutor({ slots: 1 });
    const actionDigest = await cluster.action(sh('sleep 5'));
    const outcome = execute(cluster, { instanceName: '', actionDigest });
    await until(() => doomed.runningTasks > 0, 'the action to run on the doomed executor');
    await doomed.stop();
    expect((await outcome).response!.status?.code).toBe(googleRpc.Code.UNAVAILABLE);
  });

  it('8 concurrent clients with overlapping actions run each distinct action once and all get results', async () => {
    cluster = await startTestCluster();
    scratch = await mkdtemp(join(tmpdir(), 'kiln-runs-'));
    await cluster.addExecutor({ slots: 2 });
    await cluster.addExecutor({ slots: 2 });
    const distinct = 6;
    const digests: Digest[] = [];
    for (let i = 0; i < distinct; i++) {
      // Each run appends a line to a file outside the build directory: the number of lines is the number of runs.
      digests.push(await cluster.action(sh(`echo run >> ${scratch}/action-${i}; sleep 0.2; echo ${i} > out`)));
    }
    const clients = Array.from({ length: 8 }, (_, c) =>
      Promise.all(
        // Every client asks for 4 of the 6 actions, starting at a different one.
        Array.from({ length: 4 }, (_, k) => (c + k) % distinct).map(async (i) => ({
          i,
          outcome: await execute(cluster!, { instanceName: '', actionDigest: digests[i] }),
        })),
      ),
    );
    const results = (await Promise.all(clients)).flat();
    expect(results).toHaveLength(32);
    for (const { outcome } of results) {
      expect(outcome.error).toBeUndefined();
      expect(outcome.response!.result!.exitCode).toBe(0);
    }
    const files = (await readdir(scratch)).sort();
    expect(files).toEqual(Array.from({ length: distinct }, (_, i) => `action-${i}`).sort());
    for (const f of files) expect(await readFile(join(scratch, f), 'utf8')).toBe('run\n');
  });
});
