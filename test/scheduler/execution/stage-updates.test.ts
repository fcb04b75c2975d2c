import { describe, expect, it } from 'vitest';
import { reapi, unpackAny, type longrunning } from '../../../src/core/index.js';
import { must } from '../cache-server-fixture.js';
import { collectStream, execute, shCommand as sh, startClusterForTest } from './cluster-fixture.js';
import { until } from '../../setup/until.js';

const Stage = reapi.ExecutionStage_Value;
const stageOf = (op: longrunning.Operation) => unpackAny(reapi.ExecuteOperationMetadata, op.metadata!)!.stage;

describe('Execute stream stage updates (stageUpdateDelayMs)', () => {
  it('an action that finishes within the delay costs one message: the final Operation', async () => {
    const cluster = await startClusterForTest({ stageUpdateDelayMs: 60_000 });
    await cluster.addExecutor();
    const outcome = await execute(cluster, { instanceName: '', actionDigest: await cluster.action(sh('true')) });
    expect(outcome.stages).toEqual([Stage.COMPLETED]);
    expect(outcome.last!.done).toBe(true);
    expect(outcome.response!.result!.exitCode).toBe(0);
    expect(outcome.response!.result!.executionMetadata!.executionStartTimestamp).toBeTruthy();
  });

  it('a slow action still shows the stage it is in, each stage once, then the result', async () => {
    const cluster = await startClusterForTest({ stageUpdateDelayMs: 50 });
    await cluster.addExecutor();
    const outcome = await execute(cluster, { instanceName: '', actionDigest: await cluster.action(sh('sleep 0.5')) });
    expect(outcome.stages).toContain(Stage.EXECUTING);
    expect(outcome.stages.at(-1)).toBe(Stage.COMPLETED);
    for (let i = 1; i < outcome.stages.length; i++) expect(outcome.stages[i]).not.toBe(outcome.stages[i - 1]);
    expect(outcome.operations.filter((o) => o.done)).toHaveLength(1);
  });

  it('a queued action shows QUEUED once the delay has passed, then runs when an executor comes', async () => {
    const cluster = await startClusterForTest({ stageUpdateDelayMs: 20 });
    const stream = cluster.exec.Execute({ instanceName: '', actionDigest: await cluster.action(sh('true')) });
    const outcome = collectStream(stream);
    const first = await new Promise<longrunning.Operation>((resolve) => stream.once('data', resolve));
    expect(stageOf(first)).toBe(Stage.QUEUED);
    expect(first.done).toBe(false);
    await cluster.addExecutor();
    const { stages } = await outcome;
    expect(stages[0]).toBe(Stage.QUEUED);
    expect(stages.at(-1)).toBe(Stage.COMPLETED);
  });

  it('WaitExecution answers with the current state at once, whatever the delay', async () => {
    const cluster = await startClusterForTest({ stageUpdateDelayMs: 60_000 });
    const execution = execute(cluster, { instanceName: '', actionDigest: await cluster.action(sh('true')) });
    let listed: longrunning.Operation[] = [];
    await until(async () => {
      ({ operations: listed } = await must(cluster.ops, cluster.ops.ListOperations, { name: '', filter: '', pageSize: 0, pageToken: '' }));
      return listed.length > 0;
    }, 'the operation to be listed');
    const stream = cluster.exec.WaitExecution({ name: listed[0]!.name });
    const waited = collectStream(stream);
    const first = await new Promise<longrunning.Operation>((resolve) => stream.once('data', resolve));
    expect(stageOf(first)).toBe(Stage.QUEUED);
    await cluster.addExecutor();
    expect((await waited).stages).toEqual([Stage.QUEUED, Stage.COMPLETED]);
    expect((await execution).stages).toEqual([Stage.COMPLETED]);
  });
});
