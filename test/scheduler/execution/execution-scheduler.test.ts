import { describe, expect, it } from 'vitest';
import { digestOf, encodeRequestMetadata, googleRpc, kilnWorker, NotFoundError, reapi } from '../../../src/core/index.js';
import {
  DEFAULT_SCHEDULER_CONFIG,
  ExecutionScheduler,
  NO_METADATA,
  operationMetadataOf,
  type OperationState,
  type SchedulerConfig,
  type ValidatedAction,
} from '../../../scheduler/execution/index.js';

const Stage = reapi.ExecutionStage_Value;
const Code = googleRpc.Code;

class FakeClock {
  t = 1_000_000;
  now(): number {
    return this.t;
  }
}

function setup(config: Partial<SchedulerConfig> = {}) {
  const clock = new FakeClock();
  let n = 0;
  const scheduler = new ExecutionScheduler({ ...DEFAULT_SCHEDULER_CONFIG, ...config }, clock, () => `id${++n}`);
  return { clock, scheduler };
}

function validated(name: string, platform: { name: string; value: string }[] = [], timeoutMs = 60_000): ValidatedAction {
  const action = reapi.Action.decode(reapi.Action.encode({ salt: Buffer.from(name) }));
  return {
    actionDigest: digestOf(Buffer.from(name)),
    action,
    command: reapi.Command.decode(reapi.Command.encode({ arguments: [name] })),
    platform,
    timeoutMs,
  };
}

interface Submitted {
  name: string;
  updates: OperationState[];
  last(): OperationState;
  stop(): void;
}

function submit(
  scheduler: ExecutionScheduler,
  action: ValidatedAction,
  options: { priority?: number; invocationId?: string; doNotCache?: boolean } = {},
): Submitted {
  const op = scheduler.begin('', action.actionDigest);
  const updates: OperationState[] = [];
  const stop = scheduler.watch(op.name, (s) => updates.push(s));
  scheduler.submit(op.name, {
    instanceName: '',
    validated: action,
    priority: options.priority ?? 0,
    invocationId: options.invocationId ?? '',
    doNotCache: options.doNotCache ?? false,
  });
  return { name: op.name, updates, last: () => updates[updates.length - 1]!, stop };
}

function sync(
  scheduler: ExecutionScheduler,
  executorId: string,
  tasks: kilnWorker.TaskReportInit[] = [],
  options: { slots?: number; properties?: { name: string; value: string }[] } = {},
) {
  const request = kilnWorker.SynchronizeRequest.decode(
    kilnWorker.SynchronizeRequest.encode({
      executorId,
      slots: options.slots ?? 1,
      platformProperties: options.properties ?? [],
      tasks,
      mayWait: true,
    }),
  );
  return scheduler.synchronize(request);
}

const completed = (taskId: string, exitCode = 0): kilnWorker.TaskReportInit => ({
  taskId,
  stage: kilnWorker.TaskStage.COMPLETED,
  response: { result: { exitCode }, status: { code: Code.OK } },
});

const commandOf = (a: kilnWorker.AssignmentInit) => (a.command as reapi.Command).arguments[0];

describe('ExecutionScheduler', () => {
  it('runs an action through CACHE_CHECK, QUEUED, EXECUTING, COMPLETED', () => {
    const { scheduler } = setup();
    const op = submit(scheduler, validated('a'));
    const first = sync(scheduler, 'w1');
    expect(first.response.assignments).toHaveLength(1);
    const taskId = first.response.assignments![0]!.taskId!;
    sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]);
    sync(scheduler, 'w1', [completed(taskId, 3)]);
    expect(op.updates.map((u) => u.stage)).toEqual([Stage.CACHE_CHECK, Stage.QUEUED, Stage.EXECUTING, Stage.COMPLETED]);
    expect(op.last().done).toBe(true);
    expect(op.last().response?.result).toMatchObject({ exitCode: 3 });
  });

  it('runs identical in-flight actions once and answers every waiter', () => {
    const { scheduler } = setup();
    const ops = [submit(scheduler, validated('same')), submit(scheduler, validated('same')), submit(scheduler, validated('same'))];
    const { assignments } = sync(scheduler, 'w1', [], { slots: 4 }).response;
    expect(assignments).toHaveLength(1);
    sync(scheduler, 'w1', [completed(assignments![0]!.taskId!)], { slots: 4 });
    for (const op of ops) expect(op.last()).toMatchObject({ done: true, response: { result: { exitCode: 0 } } });
    expect(new Set(ops.map((o) => o.name)).size).toBe(3);
  });

  it('does not de-duplicate do_not_cache actions', () => {
    const { scheduler } = setup();
    submit(scheduler, validated('x'), { doNotCache: true });
    submit(scheduler, validated('x'), { doNotCache: true });
    expect(sync(scheduler, 'w1', [], { slots: 4 }).response.assignments).toHaveLength(2);
  });

  it('hands out the lowest priority number first', () => {
    const { scheduler } = setup();
    submit(scheduler, validated('low'), { priority: 10 });
    submit(scheduler, validated('default'));
    submit(scheduler, validated('urgent'), { priority: -5 });
    const order = sync(scheduler, 'w1', [], { slots: 3 }).response.assignments!.map(commandOf);
    expect(order).toEqual(['urgent', 'default', 'low']);
  });

  it('round-robins between invocations at equal priority', () => {
    const { scheduler } = setup();
    for (let i = 0; i < 4; i++) submit(scheduler, validated(`big${i}`), { invocationId: 'big-build' });
    submit(scheduler, validated('small0'), { invocationId: 'small-build' });
    submit(scheduler, validated('small1'), { invocationId: 'small-build' });
    const order = sync(scheduler, 'w1', [], { slots: 6 }).response.assignments!.map(commandOf);
    expect(order).toEqual(['big0', 'small0', 'big1', 'small1', 'big2', 'big3']);
  });

  it('matches platforms per key: exact, minimum, ignore', () => {
    const { scheduler } = setup({ platformRules: { cores: 'minimum', label: 'ignore' } });
    submit(
      scheduler,
      validated('needs8', [
        { name: 'cores', value: '8' },
        { name: 'OSFamily', value: 'linux' },
        { name: 'label', value: 'x' },
      ]),
    );
    expect(
      sync(scheduler, 'small', [], {
        properties: [
          { name: 'cores', value: '4' },
          { name: 'OSFamily', value: 'linux' },
        ],
      }).response.assignments,
    ).toEqual([]);
    expect(
      sync(scheduler, 'mac', [], {
        properties: [
          { name: 'cores', value: '16' },
          { name: 'OSFamily', value: 'macos' },
        ],
      }).response.assignments,
    ).toEqual([]);
    const big = sync(scheduler, 'big', [], {
      properties: [
        { name: 'cores', value: '16' },
        { name: 'OSFamily', value: 'linux' },
      ],
    });
    expect(big.response.assignments!.map(commandOf)).toEqual(['needs8']);
  });

  it('ignores the properties executors interpret (max-mem, max-cores, max-pids, container-image) for matching unless a rule names them', () => {
    const sized = [
      { name: 'container-image', value: 'docker://kiln/base:latest' },
      { name: 'max-cores', value: '1' },
      { name: 'max-mem', value: '512m' },
      { name: 'max-pids', value: '64' },
      { name: 'OSFamily', value: 'linux' },
    ];
    const { scheduler } = setup();
    submit(scheduler, validated('sized', sized));
    expect(sync(scheduler, 'plain', [], { properties: [{ name: 'OSFamily', value: 'linux' }] }).response.assignments!.map(commandOf)).toEqual(['sized']);
    const strict = setup({ platformRules: { 'max-mem': 'exact' } }).scheduler;
    submit(strict, validated('sized', sized));
    expect(sync(strict, 'plain', [], { properties: [{ name: 'OSFamily', value: 'linux' }] }).response.assignments).toEqual([]);
    // A property named like an Object.prototype member has no rule: it matches exactly.
    submit(strict, validated('odd', [{ name: 'constructor', value: 'x' }]));
    expect(sync(strict, 'other', [], { properties: [{ name: 'constructor', value: 'x' }] }).response.assignments!.map(commandOf)).toEqual(['odd']);
  });

  it('re-queues the action of a vanished executor, then fails it with UNAVAILABLE after the retry limit', () => {
    const { clock, scheduler } = setup({ maxRetries: 1 });
    const op = submit(scheduler, validated('a'));
    const silence = DEFAULT_SCHEDULER_CONFIG.heartbeatIntervalMs + DEFAULT_SCHEDULER_CONFIG.heartbeatGraceMs + 1;
    expect(sync(scheduler, 'w1').response.assignments).toHaveLength(1);
    clock.t += silence;
    scheduler.tick();
    expect(op.last()).toMatchObject({ stage: Stage.QUEUED, done: false });
    const second = sync(scheduler, 'w2').response.assignments!;
    expect(second).toHaveLength(1);
    clock.t += silence;
    scheduler.tick();
    expect(op.last().done).toBe(true);
    expect(op.last().response?.status).toMatchObject({ code: Code.UNAVAILABLE, message: expect.stringMatching(/vanished 2 times/) });
  });

  it('keeps an executor that heartbeats in time', () => {
    const { clock, scheduler } = setup();
    const op = submit(scheduler, validated('a'));
    const taskId = sync(scheduler, 'w1').response.assignments![0]!.taskId!;
    for (let i = 0; i < 5; i++) {
      clock.t += DEFAULT_SCHEDULER_CONFIG.heartbeatIntervalMs;
      sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]);
      scheduler.tick();
    }
    expect(op.last()).toMatchObject({ stage: Stage.EXECUTING, done: false });
  });

  it('re-queues at once a task the executor did not receive', () => {
    const { scheduler } = setup();
    const op = submit(scheduler, validated('a'));
    expect(sync(scheduler, 'w1').response.assignments).toHaveLength(1);
    // The answer was lost: the next call reports nothing and receives the task again.
    expect(sync(scheduler, 'w1').response.assignments!.map(commandOf)).toEqual(['a']);
    expect(op.last().done).toBe(false);
  });

  it('fails with DEADLINE_EXCEEDED when the executor does not report within the timeout plus grace', () => {
    const { clock, scheduler } = setup({ executionGraceMs: 1000 });
    const op = submit(scheduler, validated('slow', [], 5000));
    const taskId = sync(scheduler, 'w1').response.assignments![0]!.taskId!;
    clock.t += 5000;
    sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]);
    scheduler.tick();
    expect(op.last().done).toBe(false);
    clock.t += 1001;
    scheduler.tick();
    expect(op.last().response?.status?.code).toBe(Code.DEADLINE_EXCEEDED);
    // The executor is told to stop.
    expect(sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]).response.cancelTaskIds).toEqual([taskId]);
  });

  it('fails fast with FAILED_PRECONDITION naming the unmet properties when no executor could run the action', () => {
    const { clock, scheduler } = setup({ noExecutorWaitMs: 30_000 });
    sync(scheduler, 'w1', [], { properties: [{ name: 'OSFamily', value: 'linux' }] });
    const op = submit(
      scheduler,
      validated('gpu', [
        { name: 'OSFamily', value: 'linux' },
        { name: 'gpu', value: 'a100' },
      ]),
    );
    clock.t += 29_000;
    sync(scheduler, 'w1', [], { properties: [{ name: 'OSFamily', value: 'linux' }] });
    scheduler.tick();
    expect(op.last().done).toBe(false);
    clock.t += 1000;
    scheduler.tick();
    expect(op.last().response?.status).toMatchObject({ code: Code.FAILED_PRECONDITION, message: expect.stringContaining('gpu=a100') });
    expect(op.last().response?.status?.message).not.toContain('OSFamily');
  });

  it('waits while some executor could run the action, however busy', () => {
    const { clock, scheduler } = setup({ noExecutorWaitMs: 1000 });
    submit(scheduler, validated('first'));
    sync(scheduler, 'w1');
    const op = submit(scheduler, validated('second'));
    for (let i = 0; i < 5; i++) {
      clock.t += 1000;
      scheduler.tick();
    }
    expect(op.last()).toMatchObject({ stage: Stage.QUEUED, done: false });
  });

  it('cancels on CancelOperation and tells the executor to stop', () => {
    const { scheduler } = setup();
    const op = submit(scheduler, validated('a'));
    const taskId = sync(scheduler, 'w1').response.assignments![0]!.taskId!;
    scheduler.cancel(op.name);
    expect(op.last().response?.status?.code).toBe(Code.CANCELLED);
    expect(sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]).response.cancelTaskIds).toEqual([taskId]);
  });

  it('keeps running while another waiter of a shared execution remains', () => {
    const { scheduler } = setup();
    const a = submit(scheduler, validated('shared'));
    const b = submit(scheduler, validated('shared'));
    const taskId = sync(scheduler, 'w1').response.assignments![0]!.taskId!;
    scheduler.cancel(a.name);
    expect(sync(scheduler, 'w1', [{ taskId, stage: kilnWorker.TaskStage.RUNNING }]).response.cancelTaskIds).toEqual([]);
    sync(scheduler, 'w1', [completed(taskId)]);
    expect(b.last().response?.status?.code).toBe(Code.OK);
  });

  it('cancels an execution whose every client left, after the grace for reconnecting', () => {
    const { clock, scheduler } = setup({ abandonedOperationGraceMs: 5000 });
    const op = submit(scheduler, validated('a'));
    op.stop();
    clock.t += 4000;
    scheduler.tick();
    // A client reconnects (WaitExecution) in time: nothing is cancelled.
    const again: OperationState[] = [];
    const stop = scheduler.watch(op.name, (s) => again.push(s));
    clock.t += 10_000;
    scheduler.tick();
    expect(again[again.length - 1]!.done).toBe(false);
    stop();
    clock.t += 5000;
    scheduler.tick();
    expect(scheduler.get(op.name).response?.status?.code).toBe(Code.CANCELLED);
    expect(sync(scheduler, 'w1').response.assignments).toEqual([]);
  });

  it('answers from the cache and forgets finished operations after their retention', () => {
    const { clock, scheduler } = setup({ completedOperationRetentionMs: 1000 });
    const op = scheduler.begin('', digestOf(Buffer.from('a')));
    scheduler.finishFromCache(op.name, { exitCode: 0 });
    expect(scheduler.get(op.name)).toMatchObject({ done: true, response: { cachedResult: true } });
    clock.t += 1000;
    scheduler.tick();
    expect(() => scheduler.get(op.name)).toThrow(NotFoundError);
  });

  it('cancels tasks it does not know (after a scheduler restart)', () => {
    const { scheduler } = setup();
    expect(sync(scheduler, 'w1', [{ taskId: 'stale', stage: kilnWorker.TaskStage.RUNNING }]).response.cancelTaskIds).toEqual(['stale']);
  });

  it('never assigns more tasks than free slots', () => {
    const { scheduler } = setup();
    for (let i = 0; i < 5; i++) submit(scheduler, validated(`a${i}`));
    const first = sync(scheduler, 'w1', [], { slots: 2 }).response.assignments!;
    expect(first).toHaveLength(2);
    const reports = first.map((a) => ({ taskId: a.taskId!, stage: kilnWorker.TaskStage.RUNNING }));
    expect(sync(scheduler, 'w1', reports, { slots: 2 }).response.assignments).toEqual([]);
    expect(sync(scheduler, 'w1', [reports[0]!, completed(first[1]!.taskId!)], { slots: 2 }).response.assignments).toHaveLength(1);
  });
});

const LINUX = [{ name: 'OSFamily', value: 'linux' }];

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
    const action = validated('a', LINUX);
    const metadata = { ...NO_METADATA, invocationId: 'inv-1', targetId: '//:a' };
    const op = scheduler.begin('', action.actionDigest, metadata);
    clock.t += 5;
    scheduler.submit(op.name, { instanceName: '', validated: action, priority: 0, invocationId: 'inv-1', doNotCache: false });
    expect(scheduler.history.get(op.name)).toMatchObject({ stage: 'QUEUED', metadata, createdMs: 1_000_000, queuedMs: 1_000_005, platform: action.platform });
    expect([...scheduler.queuedExecutions().values()].flat()).toMatchObject([
      { actionDigest: action.actionDigest, invocationId: 'inv-1', operationNames: [op.name] },
    ]);
    clock.t += 10;
    const taskId = sync(scheduler, 'e1', [], { properties: LINUX }).response.assignments![0]!.taskId!;
    expect(scheduler.history.get(op.name)).toMatchObject({ stage: 'EXECUTING', worker: 'e1', startedMs: 1_000_015 });
    expect(scheduler.executorDetails()).toMatchObject([{ name: 'e1', running: 1, tasks: [{ actionDigest: action.actionDigest, assignedAt: 1_000_015 }] }]);
    clock.t += 20;
    sync(scheduler, 'e1', [completed(taskId, 3)], { properties: LINUX });
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
