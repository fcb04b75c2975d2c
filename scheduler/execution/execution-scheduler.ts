import { randomUUID } from 'node:crypto';
import {
  digestKey,
  durationFromMs,
  googleRpc,
  kilnWorker,
  NotFoundError,
  reapi,
  ResourceExhaustedError,
  timestampFromMs,
  type Clock,
  type Digest,
} from '../../src/core/index.js';
import type { ValidatedAction } from './action-validator.js';
import { ExecutionQueue } from './execution-queue.js';
import { operationName } from './operation-name.js';
import { PlatformRules, type PlatformProperty } from './platform-rules.js';
import { quotedName } from '../instance-name.js';
import type { SchedulerConfig } from './scheduler-config.js';

const Stage = reapi.ExecutionStage_Value;
const Code = googleRpc.Code;

/** What clients see of one operation (one Execute call). */
export interface OperationState {
  readonly name: string;
  readonly instanceName: string;
  readonly actionDigest: Digest;
  readonly stage: reapi.ExecutionStage_Value;
  readonly done: boolean;
  /** Set once done. */
  readonly response?: reapi.ExecuteResponseInit;
}

export type OperationListener = (operation: OperationState) => void;

export interface SubmitRequest {
  readonly instanceName: string;
  readonly validated: ValidatedAction;
  /** ExecutionPolicy.priority: lower is more urgent, 0 is the default. */
  readonly priority: number;
  /** RequestMetadata.tool_invocation_id ('' when the client sent none). */
  readonly invocationId: string;
  readonly doNotCache: boolean;
}

/** An action being run once on behalf of every operation waiting for it. */
interface Execution {
  readonly dedupKey: string | undefined;
  readonly instanceName: string;
  readonly validated: ValidatedAction;
  readonly platformKey: string;
  readonly invocationId: string;
  priority: number;
  readonly operations: Set<OperationRecord>;
  state: 'queued' | 'running' | 'done';
  /** Times handed to an executor. */
  attempts: number;
  task?: { id: string; executorId: string; assignedAt: number } | undefined;
  queuedAt: number;
  /** Since when no live executor could run it. */
  unmatchedSince?: number | undefined;
}

class OperationRecord implements OperationState {
  stage: reapi.ExecutionStage_Value = Stage.CACHE_CHECK;
  done = false;
  response?: reapi.ExecuteResponseInit;
  readonly listeners = new Set<OperationListener>();
  abandonedAt: number | undefined;
  completedAt: number | undefined;
  execution: Execution | undefined;
  constructor(
    readonly name: string,
    readonly instanceName: string,
    readonly actionDigest: Digest,
  ) {}

  snapshot(): OperationState {
    return {
      name: this.name,
      instanceName: this.instanceName,
      actionDigest: this.actionDigest,
      stage: this.stage,
      done: this.done,
      ...(this.response ? { response: this.response } : {}),
    };
  }
}

interface ExecutorRecord {
  readonly id: string;
  displayName: string;
  instanceName: string;
  properties: PlatformProperty[];
  slots: number;
  readonly tasks: Map<string, Execution>;
  lastSeen: number;
  /** Cached platform matches per queue key; reset when the properties change. */
  canRun: Map<string, boolean>;
  /** Wakes the executor's held Synchronize call. */
  wake?: (() => void) | undefined;
  /** Tasks to cancel that the held call should carry. */
  readonly cancelled: Set<string>;
}

/** What to answer a Synchronize call with, and whether the call may be held for work. */
export interface SynchronizeOutcome {
  readonly response: kilnWorker.SynchronizeResponseInit;
  readonly mayHold: boolean;
}

/** What the scheduler tells its metrics (scheduler-metrics.ts); every hook is optional and synchronous. */
export interface SchedulerObserver {
  /** An operation (an Execute call) ended with `response` (`cachedResult` says whether the action cache answered it). */
  operationFinished?(response: reapi.ExecuteResponseInit): void;
  /** An execution was handed to an executor `queuedMs` after it was first queued. */
  executionAssigned?(platformKey: string, queuedMs: number): void;
  /** An executor reported an execution complete with `response` (its ExecutedActionMetadata has the stage times). */
  executionReported?(response: reapi.ExecuteResponseInit): void;
}

/** One platform queue as metrics see it. */
export interface QueueSnapshot {
  readonly platformKey: string;
  readonly length: number;
  /** When its longest-waiting execution was first queued. */
  readonly oldestQueuedAt: number;
}

/** One executor as metrics see it. */
export interface ExecutorSnapshot {
  readonly name: string;
  readonly slots: number;
  readonly running: number;
}

/** A completed task whose result the worker service may write to the action cache. */
interface TaskIdentity {
  readonly instanceName: string;
  readonly actionDigest: Digest;
  readonly doNotCache: boolean;
}

/**
 * The execution scheduler's state machine, all in memory and free of I/O and timers: operations
 * (one per Execute call), executions (one per distinct in-flight action; identical cacheable actions
 * share one), the platform queues, and the executors with their tasks. Time comes from the injected
 * Clock; `tick()` applies every deadline (heartbeats, timeouts, abandoned operations, no executor).
 * The gRPC services wrap it; see worker.proto for the executor side of the protocol.
 */
export class ExecutionScheduler {
  private readonly operations = new Map<string, OperationRecord>();
  private readonly inFlight = new Map<string, Execution>();
  private readonly queue = new ExecutionQueue<Execution>();
  private readonly executors = new Map<string, ExecutorRecord>();
  private readonly running = new Set<Execution>();
  readonly rules: PlatformRules;

  constructor(
    readonly config: SchedulerConfig,
    private readonly clock: Clock,
    private readonly newId: () => string = randomUUID,
    private readonly observer: SchedulerObserver = {},
  ) {
    this.rules = new PlatformRules(config.platformRules);
  }

  /** The queues that hold work, with their length and the age of their oldest execution. */
  queues(): QueueSnapshot[] {
    const byKey = new Map<string, { length: number; oldestQueuedAt: number }>();
    for (const execution of this.queue.items()) {
      const q = byKey.get(execution.platformKey);
      if (q) {
        q.length++;
        q.oldestQueuedAt = Math.min(q.oldestQueuedAt, execution.queuedAt);
      } else byKey.set(execution.platformKey, { length: 1, oldestQueuedAt: execution.queuedAt });
    }
    return [...byKey].map(([platformKey, q]) => ({ platformKey, ...q }));
  }

  /** The live executors: slots announced (0 while draining) and tasks running. */
  executorStates(): ExecutorSnapshot[] {
    return [...this.executors.values()].map((e) => ({ name: e.displayName || e.id, slots: e.slots, running: e.tasks.size }));
  }

  // ---- Execution API side ----

  /** A new operation for an Execute call, in stage CACHE_CHECK; `submit` or `finishFromCache` follows. */
  begin(instanceName: string, actionDigest: Digest): OperationState {
    const name = operationName(instanceName, this.newId());
    const op = new OperationRecord(name, instanceName, actionDigest);
    this.operations.set(name, op);
    return op.snapshot();
  }

  /**
   * Refuses an action its platform's queue has no room for (`maxQueuedActionsPerPlatform`), before an
   * operation exists: one that would join an identical action in flight always has room.
   * @throws ResourceExhaustedError with `queueFullRetryAfterMs` for RetryInfo
   */
  checkQueueRoom(instanceName: string, validated: ValidatedAction, doNotCache: boolean): void {
    const max = this.config.maxQueuedActionsPerPlatform;
    if (max === 0) return;
    if (!doNotCache && this.inFlight.has(`${instanceName}\n${digestKey(validated.actionDigest)}`)) return;
    const key = this.rules.queueKey(validated.platform);
    const queued = this.queue.lengthOf(key);
    if (queued < max) return;
    const platform = validated.platform.map((p) => `${p.name}=${p.value}`).join(',') || '(empty platform)';
    throw new ResourceExhaustedError(
      `the queue of platform ${quotedName(platform)} is full (${queued} actions queued, limit ${max}); retry later`,
      this.config.queueFullRetryAfterMs,
    );
  }

  /** Queues the operation's action, or joins the identical cacheable one already in flight. */
  submit(name: string, request: SubmitRequest): OperationState {
    const op = this.record(name);
    if (op.done) return op.snapshot();
    const { validated } = request;
    const dedupKey = request.doNotCache ? undefined : `${request.instanceName}\n${digestKey(validated.actionDigest)}`;
    const existing = dedupKey === undefined ? undefined : this.inFlight.get(dedupKey);
    if (existing) {
      this.attach(op, existing);
      if (request.priority < existing.priority && existing.state === 'queued') {
        this.queue.remove(existing.platformKey, existing);
        existing.priority = request.priority;
        this.queue.add(existing.platformKey, existing, existing.priority, existing.invocationId);
      }
      return op.snapshot();
    }
    const execution: Execution = {
      dedupKey,
      instanceName: request.instanceName,
      validated,
      platformKey: this.rules.queueKey(validated.platform),
      invocationId: request.invocationId,
      priority: request.priority,
      operations: new Set(),
      state: 'queued',
      attempts: 0,
      queuedAt: this.clock.now(),
    };
    if (dedupKey !== undefined) this.inFlight.set(dedupKey, execution);
    this.attach(op, execution);
    this.enqueue(execution);
    return op.snapshot();
  }

  /** The operation is answered from the action cache: done at once, cached_result set. */
  finishFromCache(name: string, result: reapi.ActionResultInit): void {
    this.finishOperation(this.record(name), { result, cachedResult: true, status: { code: Code.OK } });
  }

  /** Ends the operation with an error status (the cache lookup failed, ...). */
  fail(name: string, status: googleRpc.StatusInit): void {
    this.finishOperation(this.record(name), { status });
  }

  get(name: string): OperationState {
    return this.record(name).snapshot();
  }

  list(): OperationState[] {
    return [...this.operations.values()].map((o) => o.snapshot());
  }

  /**
   * Calls `listener` now and on every change of the operation. The returned function stops it; when
   * the last listener of an unfinished operation stops, the operation is cancelled unless a client
   * comes back (WaitExecution) within the abandoned-operation grace.
   */
  watch(name: string, listener: OperationListener): () => void {
    const op = this.record(name);
    op.listeners.add(listener);
    op.abandonedAt = undefined;
    listener(op.snapshot());
    return () => {
      if (!op.listeners.delete(listener)) return;
      if (op.listeners.size === 0 && !op.done) op.abandonedAt = this.clock.now();
    };
  }

  /** CancelOperation: the operation ends CANCELLED; its execution stops if no other operation waits for it. */
  cancel(name: string): void {
    const op = this.record(name);
    if (op.done) return;
    this.finishOperation(op, { status: { code: Code.CANCELLED, message: 'the operation was cancelled' } });
  }

  /** DeleteOperation: forgets the operation (cancelling it first when unfinished). */
  delete(name: string): void {
    this.cancel(name);
    this.operations.delete(name);
  }

  // ---- Worker protocol side ----

  /** What is known about a task, for writing its result to the action cache; undefined when unknown. */
  taskIdentity(executorId: string, taskId: string): TaskIdentity | undefined {
    const execution = this.executors.get(executorId)?.tasks.get(taskId);
    if (!execution) return undefined;
    return { instanceName: execution.instanceName, actionDigest: execution.validated.actionDigest, doNotCache: execution.dedupKey === undefined };
  }

  /** Applies one Synchronize request (see worker.proto for the protocol) and computes its answer. */
  synchronize(request: kilnWorker.SynchronizeRequest): SynchronizeOutcome {
    const now = this.clock.now();
    const executor = this.register(request, now);
    const cancelTaskIds: string[] = [];
    const reported = new Set<string>();
    for (const report of request.tasks) {
      reported.add(report.taskId);
      const execution = executor.tasks.get(report.taskId);
      if (!execution) {
        if (report.stage !== kilnWorker.TaskStage.COMPLETED) cancelTaskIds.push(report.taskId);
        continue;
      }
      if (report.stage === kilnWorker.TaskStage.COMPLETED) {
        executor.tasks.delete(report.taskId);
        const response = report.response ?? { status: { code: Code.INTERNAL, message: 'the executor reported no result' } };
        if (execution.state !== 'done') this.observer.executionReported?.(response);
        this.completeExecution(execution, response);
      } else {
        for (const op of execution.operations) this.setStage(op, Stage.EXECUTING);
      }
    }
    // Assigned by an answer that never reached the executor: run it elsewhere, not counted as a retry.
    for (const [taskId, execution] of executor.tasks) {
      if (reported.has(taskId)) continue;
      executor.tasks.delete(taskId);
      this.requeue(execution);
    }
    executor.cancelled.clear();
    const assignments = this.assign(executor);
    return {
      response: { assignments, cancelTaskIds, heartbeatInterval: durationFromMs(this.config.heartbeatIntervalMs) },
      mayHold: request.mayWait && assignments.length === 0 && cancelTaskIds.length === 0,
    };
  }

  /**
   * Holds an executor's call: `wake` runs once work it could run is queued or one of its tasks is
   * cancelled. The returned function unregisters it.
   */
  hold(executorId: string, wake: () => void): () => void {
    const executor = this.executors.get(executorId);
    if (!executor) {
      wake();
      return () => {};
    }
    let called = false;
    const once = () => {
      if (called) return;
      called = true;
      if (executor.wake === once) executor.wake = undefined;
      wake();
    };
    executor.wake = once;
    return () => {
      called = true;
      if (executor.wake === once) executor.wake = undefined;
    };
  }

  /** The answer for a held call once it ends: work for free slots and cancellations since. */
  release(executorId: string): kilnWorker.SynchronizeResponseInit {
    const executor = this.executors.get(executorId);
    const heartbeatInterval = durationFromMs(this.config.heartbeatIntervalMs);
    if (!executor) return { heartbeatInterval };
    executor.lastSeen = this.clock.now();
    const cancelTaskIds = [...executor.cancelled];
    executor.cancelled.clear();
    return { assignments: this.assign(executor), cancelTaskIds, heartbeatInterval };
  }

  // ---- Deadlines ----

  /** Applies every deadline that has passed. Call it periodically (the services do, every few hundred ms). */
  tick(): void {
    const now = this.clock.now();
    const silence = this.config.heartbeatIntervalMs + this.config.heartbeatGraceMs;
    for (const executor of [...this.executors.values()]) {
      if (now - executor.lastSeen <= silence) continue;
      this.executors.delete(executor.id);
      for (const execution of executor.tasks.values()) this.retryAfterVanish(execution, executor);
    }
    for (const execution of [...this.running]) {
      const task = execution.task!;
      if (now - task.assignedAt <= execution.validated.timeoutMs + this.config.executionGraceMs) continue;
      this.stopTask(execution);
      this.completeExecution(execution, {
        status: { code: Code.DEADLINE_EXCEEDED, message: `the action did not finish within its timeout of ${execution.validated.timeoutMs / 1000}s` },
      });
    }
    for (const execution of [...this.queue.items()]) this.checkRunnable(execution, now);
    for (const op of [...this.operations.values()]) {
      if (!op.done && op.abandonedAt !== undefined && now - op.abandonedAt >= this.config.abandonedOperationGraceMs) {
        this.finishOperation(op, { status: { code: Code.CANCELLED, message: 'every client waiting for the operation left' } });
      }
      if (op.done && op.completedAt !== undefined && now - op.completedAt >= this.config.completedOperationRetentionMs) {
        this.operations.delete(op.name);
      }
    }
  }

  // ---- internals ----

  private record(name: string): OperationRecord {
    const op = this.operations.get(name);
    if (!op) throw new NotFoundError(`operation ${quotedName(name)} is not known to this scheduler`);
    return op;
  }

  private attach(op: OperationRecord, execution: Execution): void {
    op.execution = execution;
    execution.operations.add(op);
    this.setStage(op, execution.state === 'running' ? Stage.EXECUTING : Stage.QUEUED);
  }

  private setStage(op: OperationRecord, stage: reapi.ExecutionStage_Value): void {
    if (op.done || op.stage === stage) return;
    op.stage = stage;
    this.emit(op);
  }

  private emit(op: OperationRecord): void {
    const snapshot = op.snapshot();
    for (const l of [...op.listeners]) l(snapshot);
  }

  /** Ends one operation; an execution left without operations is stopped. */
  private finishOperation(op: OperationRecord, response: reapi.ExecuteResponseInit): void {
    if (op.done) return;
    op.done = true;
    op.stage = Stage.COMPLETED;
    op.response = response;
    op.completedAt = this.clock.now();
    op.abandonedAt = undefined;
    this.observer.operationFinished?.(response);
    const execution = op.execution;
    op.execution = undefined;
    if (execution) {
      execution.operations.delete(op);
      if (execution.operations.size === 0 && execution.state !== 'done') this.abandonExecution(execution);
    }
    this.emit(op);
  }

  private abandonExecution(execution: Execution): void {
    if (execution.state === 'queued') this.queue.remove(execution.platformKey, execution);
    if (execution.state === 'running') this.stopTask(execution);
    this.markDone(execution);
  }

  private markDone(execution: Execution): void {
    execution.state = 'done';
    this.running.delete(execution);
    if (execution.dedupKey !== undefined && this.inFlight.get(execution.dedupKey) === execution) this.inFlight.delete(execution.dedupKey);
  }

  private completeExecution(execution: Execution, response: reapi.ExecuteResponseInit): void {
    if (execution.state === 'done') return;
    this.markDone(execution);
    for (const op of [...execution.operations]) this.finishOperation(op, response);
  }

  /** Tells the executor running the execution to stop it. */
  private stopTask(execution: Execution): void {
    const task = execution.task;
    if (!task) return;
    execution.task = undefined;
    this.running.delete(execution);
    const executor = this.executors.get(task.executorId);
    if (!executor) return;
    executor.tasks.delete(task.id);
    executor.cancelled.add(task.id);
    executor.wake?.();
  }

  private enqueue(execution: Execution): void {
    execution.state = 'queued';
    execution.task = undefined;
    this.queue.add(execution.platformKey, execution, execution.priority, execution.invocationId);
    for (const op of execution.operations) this.setStage(op, Stage.QUEUED);
    this.checkRunnable(execution, this.clock.now());
    // Wake one held executor that can run it.
    for (const executor of this.executors.values()) {
      if (executor.wake && executor.tasks.size < executor.slots && this.executorCanRun(executor, execution)) {
        executor.wake();
        break;
      }
    }
  }

  private requeue(execution: Execution): void {
    this.running.delete(execution);
    if (execution.state === 'done') return;
    this.enqueue(execution);
  }

  private retryAfterVanish(execution: Execution, executor: ExecutorRecord): void {
    this.running.delete(execution);
    execution.task = undefined;
    if (execution.attempts > this.config.maxRetries) {
      this.completeExecution(execution, {
        status: {
          code: Code.UNAVAILABLE,
          message: `the action's executor vanished ${execution.attempts} times (last: ${executor.displayName || executor.id}); giving up after ${this.config.maxRetries} retries`,
        },
      });
      return;
    }
    this.requeue(execution);
  }

  private executorCanRun(executor: ExecutorRecord, execution: Execution): boolean {
    if (executor.instanceName !== execution.instanceName) return false;
    let can = executor.canRun.get(execution.platformKey);
    if (can === undefined) {
      can = this.rules.matches(execution.validated.platform, executor.properties);
      executor.canRun.set(execution.platformKey, can);
    }
    return can;
  }

  /** Fails a queued execution that no live executor could run once it has waited long enough. */
  private checkRunnable(execution: Execution, now: number): void {
    const candidates = [...this.executors.values()].filter((e) => e.instanceName === execution.instanceName);
    if (candidates.some((e) => this.executorCanRun(e, execution))) {
      execution.unmatchedSince = undefined;
      return;
    }
    execution.unmatchedSince ??= now;
    if (now - execution.unmatchedSince < this.config.noExecutorWaitMs) return;
    this.queue.remove(execution.platformKey, execution);
    const unmet = this.rules.unmet(
      execution.validated.platform,
      candidates.map((e) => e.properties),
    );
    const named = unmet.length > 0 ? unmet.map((p) => `${p.name}=${p.value}`).join(', ') : '(none: there is no executor at all)';
    this.completeExecution(execution, {
      status: {
        code: Code.FAILED_PRECONDITION,
        message: `no executor can run this action: unmet platform properties ${named} (waited ${Math.round((now - execution.unmatchedSince) / 1000)}s)`,
      },
    });
  }

  private register(request: kilnWorker.SynchronizeRequest, now: number): ExecutorRecord {
    const properties = request.platformProperties.map((p) => ({ name: p.name, value: p.value }));
    let executor = this.executors.get(request.executorId);
    if (!executor) {
      executor = {
        id: request.executorId,
        displayName: request.displayName,
        instanceName: request.instanceName,
        properties,
        slots: request.slots,
        tasks: new Map(),
        lastSeen: now,
        canRun: new Map(),
        cancelled: new Set(),
      };
      this.executors.set(executor.id, executor);
    } else if (JSON.stringify(executor.properties) !== JSON.stringify(properties) || executor.instanceName !== request.instanceName) {
      executor.properties = properties;
      executor.instanceName = request.instanceName;
      executor.canRun = new Map();
    }
    executor.displayName = request.displayName;
    // 0: the executor drains (finishes what it holds and takes nothing more).
    executor.slots = request.slots;
    executor.lastSeen = now;
    return executor;
  }

  private assign(executor: ExecutorRecord): kilnWorker.AssignmentInit[] {
    const out: kilnWorker.AssignmentInit[] = [];
    const now = this.clock.now();
    while (executor.tasks.size < executor.slots) {
      const execution = this.queue.take((_key, sample) => this.executorCanRun(executor, sample));
      if (!execution) break;
      const taskId = this.newId();
      execution.state = 'running';
      execution.attempts++;
      execution.task = { id: taskId, executorId: executor.id, assignedAt: now };
      this.observer.executionAssigned?.(execution.platformKey, now - execution.queuedAt);
      this.running.add(execution);
      executor.tasks.set(taskId, execution);
      const first = execution.operations.values().next().value as OperationRecord | undefined;
      const { validated } = execution;
      out.push({
        taskId,
        operationName: first?.name ?? '',
        instanceName: execution.instanceName,
        actionDigest: validated.actionDigest,
        action: validated.action,
        command: validated.command,
        timeout: durationFromMs(validated.timeoutMs),
        queuedTimestamp: timestampFromMs(execution.queuedAt),
        inputDirectories: validated.inputDirectories ? [...validated.inputDirectories] : [],
      });
      for (const op of execution.operations) this.setStage(op, Stage.EXECUTING);
    }
    return out;
  }
}
