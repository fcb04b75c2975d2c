import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { main as executorMain } from '../../src/cli/commands/executor.js';
import type { CliIO } from '../../src/cli/io.js';
import { reapi, unpackAny, type longrunning } from '../../src/core/index.js';
import { collectStream, execute, shCommand, startClusterForTest } from '../scheduler/execution/cluster-fixture.js';
import type { grpc } from '../scheduler/cache-server-fixture.js';
import { parseServerLog, serverLogText } from '../setup/server-log.js';
import { until } from '../setup/until.js';

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

  it('stopped after its drain ran out, hands its action back: another executor runs it at once, not after the heartbeat deadline', {
    timeout: 60_000,
  }, async () => {
    // A heartbeat deadline of a minute: only the hand-back can requeue the action within this test.
    const cluster = await startClusterForTest({ heartbeatIntervalMs: 40_000, heartbeatGraceMs: 20_000 });
    const dir = await mkdtemp(join(tmpdir(), 'kiln-hand-back-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const runs = join(dir, 'runs');
    const slow = await cluster.addExecutor({ slots: 1, name: 'slow' });
    // Slow on its first run only: the run on the next executor finishes at once.
    const action = await cluster.action(
      shCommand(`echo run >> ${runs}; [ $(wc -l < ${runs}) -gt 1 ] || sleep 30; echo done > out.txt`, { outputPaths: ['out.txt'] }),
    );
    const outcome = execute(cluster, { instanceName: '', actionDigest: action });
    await until(() => existsSync(runs), 'the action to run on the slow executor');
    // Its drain "times out" at once: the caller stops it with the action still running.
    void slow.drain();
    const started = Date.now();
    await slow.stop();
    await cluster.addExecutor({ slots: 1, name: 'next' });
    const result = (await outcome).response?.result;
    expect(result?.exitCode).toBe(0);
    expect(result?.executionMetadata?.worker).toBe('next');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('kiln executor --drain-timeout lets the running action finish after SIGTERM, then exits 0', { timeout: 60_000 }, async () => {
    const cluster = await startClusterForTest();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-drain-cli-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    // A root executor's sandboxed actions run as nobody, which must reach their build directories.
    await chmod(dir, 0o711);
    let stderr = '';
    let interrupt!: () => void;
    const io: CliIO = {
      stdout: { write: () => undefined },
      stderr: { write: (c: string | Uint8Array) => (stderr += c.toString()) },
      cwd: dir,
      env: {},
      interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
    };
    const args = ['--scheduler', `grpc://${cluster.address}`, '--slots', '1', '--name', 'cli-drain', '--work-dir', join(dir, 'w'), '--drain-timeout', '30'];
    const exit = executorMain(args, io);
    // Long enough to be running when the signal comes (the test signals once it is EXECUTING).
    const action = await cluster.action(shCommand('sleep 2; echo finished > out.txt', { outputPaths: ['out.txt'] }));
    const stream = cluster.exec.Execute({ instanceName: '', actionDigest: action }) as grpc.ClientReadableStream<longrunning.Operation>;
    stream.on('data', (op: longrunning.Operation) => {
      if (unpackAny(reapi.ExecuteOperationMetadata, op.metadata!)?.stage === reapi.ExecutionStage_Value.EXECUTING) interrupt();
    });
    const outcome = await collectStream(stream);
    expect(await exit, stderr).toBe(0);
    expect(outcome.response?.result?.exitCode, `${JSON.stringify(outcome.response?.status)} ${stderr}`).toBe(0);
    expect(outcome.response?.result?.executionMetadata?.worker).toBe('cli-drain');
    expect(serverLogText(stderr)).toMatch(
      /^INFO: interrupted: taking no more work; running actions may finish within 30s\n(.*\n)*INFO: drained: every running action finished\n/m,
    );
    // Its line for the action names the operation the scheduler gave it.
    const ran = parseServerLog(stderr).find((r) => r.msg.includes('runs action'));
    expect(ran).toMatchObject({ role: 'executor', actionDigest: `${action.hash}/${action.sizeBytes}` });
    expect(ran?.operation).toMatch(/^operations\//);
  });

  it('resolves after the next answer when it runs nothing', async () => {
    const cluster = await startClusterForTest();
    const idle = await cluster.addExecutor({ slots: 1 });
    await idle.drain();
    expect(idle.runningTasks).toBe(0);
  });
});
