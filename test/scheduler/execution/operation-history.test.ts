import { describe, expect, it } from 'vitest';
import { digestOf, encodeRequestMetadata, kilnWorker, reapi } from '../../../src/core/index.js';
import {
  DEFAULT_SCHEDULER_CONFIG,
  ExecutionScheduler,
  NO_METADATA,
  operationMetadataOf,
  type SchedulerConfig,
  type ValidatedAction,
} from '../../../scheduler/execution/index.js';

class FakeClock {
  t = 1_000_000;
  now(): number {
    return this.t;
  }
}

function setup(config: Partial<SchedulerConfig> = {}) {
  const clock = new FakeClock();
  let n = 0;
  return { clock, scheduler: new ExecutionScheduler({ ...DEFAULT_SCHEDULER_CONFIG, ...config }, clock, () => `id${++n}`) };
}

function validated(name: string): ValidatedAction {
  return {
    actionDigest: digestOf(Buffer.from(name)),
    action: reapi.Action.decode(reapi.Action.encode({ salt: Buffer.from(name) })),
    command: reapi.Command.decode(reapi.Command.encode({ arguments: [name] })),
    platform: [{ name: 'OSFamily', value: 'linux' }],
    timeoutMs: 60_000,
  };
}

const sync = (scheduler: ExecutionScheduler, tasks: kilnWorker.TaskReportInit[] = []) =>
  scheduler.synchronize(
    kilnWorker.SynchronizeRequest.decode(
      kilnWorker.SynchronizeRequest.encode({
        executorId: 'e1',
        displayName: 'worker-1',
        slots: 1,
        platformProperties: [{ name: 'OSFamily', value: 'linux' }],
        tasks,
        mayWait: true,
      }),
    ),
  );

describe('the recent operations the scheduler keeps for the web UI', () => {
  it('reads RequestMetadata from its header bytes, and nothing from bytes that do not decode', () => {
    const raw = encodeRequestMetadata({
      toolDetails: { toolName: 'bazel', toolVersion: '4.2.3' },
      toolInvocationId: 'inv-1',
      correlatedInvocationsId: 'build-1',
      actionMnemonic: 'Genrule',
      targetId: '//:hello',
      configurationId: 'k8-fastbuild',
      actionId: 'abc',
    });
    expect(operationMetadataOf(raw)).toEqual({
      toolName: 'bazel',
      toolVersion: '4.2.3',
      invocationId: 'inv-1',
      correlatedInvocationsId: 'build-1',
      actionMnemonic: 'Genrule',
      targetId: '//:hello',
      configurationId: 'k8-fastbuild',
      actionId: 'abc',
    });
    expect(operationMetadataOf(Buffer.from([0xff, 0xff, 0xff]))).toEqual(NO_METADATA);
    expect(operationMetadataOf(undefined)).toEqual(NO_METADATA);
  });

  it('follows an operation from Execute to its result: stages, times, worker, platform and result', () => {
    const { clock, scheduler } = setup();
    const action = validated('a');
    const metadata = { ...NO_METADATA, invocationId: 'inv-1', targetId: '//:a' };
    const op = scheduler.begin('', action.actionDigest, metadata);
    clock.t += 5;
    scheduler.submit(op.name, { instanceName: '', validated: action, priority: 0, invocationId: 'inv-1', doNotCache: false });
    expect(scheduler.history.get(op.name)).toMatchObject({ stage: 'QUEUED', metadata, createdMs: 1_000_000, queuedMs: 1_000_005, platform: action.platform });
    expect([...scheduler.queuedExecutions().values()].flat()).toMatchObject([
      { actionDigest: action.actionDigest, invocationId: 'inv-1', operationNames: [op.name] },
    ]);
    clock.t += 10;
    const taskId = sync(scheduler).response.assignments![0]!.taskId!;
    expect(scheduler.history.get(op.name)).toMatchObject({ stage: 'EXECUTING', worker: 'worker-1', startedMs: 1_000_015 });
    expect(scheduler.executorDetails()).toMatchObject([
      { name: 'worker-1', running: 1, tasks: [{ actionDigest: action.actionDigest, assignedAt: 1_000_015 }] },
    ]);
    clock.t += 20;
    sync(scheduler, [{ taskId, stage: kilnWorker.TaskStage.COMPLETED, response: { result: { exitCode: 3 }, status: { code: 0 } } }]);
    expect(scheduler.history.get(op.name)).toMatchObject({
      stage: 'COMPLETED',
      completedMs: 1_000_035,
      cachedResult: false,
      status: { code: 0 },
      result: { exitCode: 3 },
    });
    expect(scheduler.executorDetails()[0]!.tasks).toEqual([]);
  });

  it('notes cache hits, and keeps only the latest recentOperations, newest first', () => {
    const { scheduler } = setup({ recentOperations: 2 });
    const names = ['a', 'b', 'c'].map((n) => {
      const op = scheduler.begin('', validated(n).actionDigest);
      scheduler.finishFromCache(op.name, { exitCode: 0 });
      return op.name;
    });
    expect(scheduler.history.newestFirst().map((op) => op.name)).toEqual([names[2], names[1]]);
    expect(scheduler.history.get(names[0]!)).toBeUndefined();
    expect(scheduler.history.get(names[2]!)).toMatchObject({ stage: 'COMPLETED', cachedResult: true });
    const none = setup({ recentOperations: 0 }).scheduler;
    none.begin('', validated('x').actionDigest);
    expect(none.history.newestFirst()).toEqual([]);
  });
});
