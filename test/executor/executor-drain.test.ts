import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reapi, unpackAny, type longrunning } from '../../src/core/index.js';
import { collectStream, execute, shCommand, startClusterForTest } from '../scheduler/execution/cluster-fixture.js';
import type { grpc } from '../scheduler/cache-server-fixture.js';

describe('an executor that drains', () => {
  it('finishes and reports the action it runs, and is assigned nothing more', { timeout: 60_000 }, async () => {
    const cluster = await startClusterForTest();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-drain-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const go = join(dir, 'go');
    const draining = await cluster.addExecutor({ slots: 1, name: 'draining' });

    // The first action runs until the test lets it finish; the second waits in the queue meanwhile.
    const first = await cluster.action(shCommand(`while [ ! -e ${go} ]; do sleep 0.01; done; echo finished > out.txt`, { outputPaths: ['out.txt'] }));
    const stream = cluster.exec.Execute({ instanceName: '', actionDigest: first }) as grpc.ClientReadableStream<longrunning.Operation>;
    const executing = new Promise<void>((resolve) =>
      stream.on('data', (op: longrunning.Operation) => {
        if (unpackAny(reapi.ExecuteOperationMetadata, op.metadata!)?.stage === reapi.ExecutionStage_Value.EXECUTING) resolve();
      }),
    );
    const firstOutcome = collectStream(stream);
    await executing;
    const second = execute(cluster, { instanceName: '', actionDigest: await cluster.action(shCommand('echo second > out.txt', { outputPaths: ['out.txt'] })) });

    const drained = draining.drain();
    await writeFile(go, '');
    await drained;
    expect(draining.runningTasks).toBe(0);
    const result = (await firstOutcome).response?.result;
    expect(result?.exitCode).toBe(0);
    expect(result?.executionMetadata?.worker).toBe('draining');
    await draining.stop();

    // Still queued: it runs on the next executor.
    await cluster.addExecutor({ slots: 1, name: 'next' });
    const secondResult = (await second).response?.result;
    expect(secondResult?.exitCode).toBe(0);
    expect(secondResult?.executionMetadata?.worker).toBe('next');
  });

  it('resolves at once when it runs nothing', async () => {
    const cluster = await startClusterForTest();
    const idle = await cluster.addExecutor({ slots: 1 });
    await idle.drain();
    expect(idle.runningTasks).toBe(0);
  });
});
