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
import { NO_METADATA, OperationHistory, type OperationMetadata, type RecordedOperation } from './operation-history.js';
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
  /** RequestMetadata.tool_invocation_id of the Execute call ('' when the client sent none). */
  readonly invocationId: string;
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
  /** ExecuteRequest.skip_cache_lookup, kept so that a restarted scheduler resuming it does the same. */
  readonly skipCacheLookup?: boolean;
}

/** A task a previous scheduler handed out (operation journal): the executor that runs it may report it. */
export interface ResumedTask {
  readonly taskId: string;
  readonly executorId: string;
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
    /** Its entry in the history of recent operations (the web UI's), kept up to date here. */
    readonly recorded: RecordedOperation,
  ) {}

  /** The client's tool_invocation_id (RequestMetadata), for logs, the journal and the executor. */
  get invocationId(): string {
    return this.recorded.metadata.invocationId;
  }

  snapshot(): OperationState {
    return {
      name: this.name,
      instanceName: this.instanceName,
      actionDigest: this.actionDigest,
      invocationId: this.invocationId,
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
  operationFinished?(response: reapi.ExecuteResponseInit, operation: OperationState): void;
  /** An operation's action was queued for the first time (`request` as submitted). */
  operationQueued?(operation: OperationState, request: SubmitRequest): void;
  /** An execution was handed to an executor as task `taskId`, on behalf of `operations`. */
  taskAssigned?(operations: readonly OperationState[], executor: { readonly id: string; readonly name: string }, taskId: string): void;
  /** A finished operation was forgotten (retention passed, or DeleteOperation). */
  operationForgotten?(name: string): void;
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

/** An execution queued or running, as the web UI's queue page shows it. */
export interface ExecutionSnapshot {
  readonly instanceName: string;
  readonly actionDigest: Digest;
  readonly platform: readonly PlatformProperty[];
  readonly invocationId: string;
  /** The operations waiting for it (identical actions share one execution). */
  readonly operationNames: readonly string[];
  readonly queuedAt: number;
  readonly priority: number;
  /** Set while it runs. */
  readonly assignedAt?: number;
}

/** One executor as the web UI shows it: what it offers and what it runs now. */
export interface ExecutorDetails extends ExecutorSnapshot {
  readonly instanceName: string;
  readonly properties: readonly PlatformProperty[];
  readonly lastSeen: number;
  readonly tasks: readonly ExecutionSnapshot[];
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
  /** Tasks a previous scheduler handed out, resumed from the journal, until their executor reports them. */
  private readonly orphans = new Map<string, { execution: Execution; since: number }>();
  /** Task ids of resumed operations still being validated: reports of them wait (neither cancelled nor taken). */
  private readonly awaitedTasks = new Set<string>();
  /** Set by `drain`: nothing more is assigned; what runs may finish. */
  private draining = false;
  readonly rules: PlatformRules;
  /** The recent operations with their clients' request metadata, bounded by `recentOperations`. */
  readonly history: OperationHistory;

  constructor(
    readonly config: SchedulerConfig,
    private readonly clock: Clock,
    private readonly newId: () => string = randomUUID,
    private readonly observer: SchedulerObserver = {},
  ) {
    this.rules = new PlatformRules(config.platformRules);
    this.history = new OperationHistory(config.recentOperations);
  }

  /** The queued executions per platform key, each queue in the order it is served. */
  queuedExecutions(): Map<string, ExecutionSnapshot[]> {
    const out = new Map<string, ExecutionSnapshot[]>();
    for (const execution of this.queue.items()) {
      let list = out.get(execution.platformKey);
      if (!list) out.set(execution.platformKey, (list = []));
      list.push(executionSnapshot(execution));
    }
    return out;
  }

  /** The live executors with the executions each runs now. */
  executorDetails(): ExecutorDetails[] {
    return [...this.executors.values()].map((e) => ({
      name: e.displayName || e.id,
      slots: e.slots,
      running: e.tasks.size,
      instanceName: e.instanceName,
      properties: e.properties,
      lastSeen: e.lastSeen,
      tasks: [...e.tasks.values()].map(executionSnapshot),
    }));
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

  /** Executions handed to an executor (or resumed and awaiting their executor's report) and not finished. */
  runningCount(): number {
    return this.running.size + this.orphans.size;
  }

  /** Whether `drain` was called. */
  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Assigns nothing more, so that a stopping scheduler lets what runs finish; what is queued stays
   * queued (the operation journal keeps it for the next scheduler).
   */
  drain(): void {
    this.draining = true;
  }

  /** The live executors: slots announced (0 while draining) and tasks running. */
  executorStates(): ExecutorSnapshot[] {
    return [...this.executors.values()].map((e) => ({ name: e.displayName || e.id, slots: e.slots, running: e.tasks.size }));
  }

  // ---- Execution API side ----

  /** A new operation for an Execute call, in stage CACHE_CHECK; `submit` or `finishFromCache` follows. */
  begin(instanceName: string, actionDigest: Digest, metadata: OperationMetadata = NO_METADATA): OperationState {
    const name = operationName(instanceName, this.newId());
    const op = new OperationRecord(name, instanceName, actionDigest, this.recordedOperation(name, instanceName, actionDigest, metadata));
    this.operations.set(name, op);
    this.history.add(op.recorded);
    return op.snapshot();
  }

  /** A history entry; a restored operation (journal) knows its client's invocation id only. */
  private recordedOperation(name: string, instanceName: string, actionDigest: Digest, metadata: OperationMetadata): RecordedOperation {
    return { name, instanceName, actionDigest, metadata, stage: 'CACHE_CHECK', createdMs: this.clock.now(), cachedResult: false };
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
    op.recorded.platform = validated.platform;
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
    this.observer.operationQueued?.(op.snapshot(), request);
    this.enqueue(execution);
    return op.snapshot();
  }

  /**
   * An operation of a previous scheduler (operation journal), finished: WaitExecution and
   * GetOperation answer with its response until the retention passes.
   */
  restoreFinished(state: OperationState & { readonly response: reapi.ExecuteResponseInit }, completedAt: number): void {
    const recorded = this.recordedOperation(state.name, state.instanceName, state.actionDigest, { ...NO_METADATA, invocationId: state.invocationId });
    const op = new OperationRecord(state.name, state.instanceName, state.actionDigest, recorded);
    op.done = true;
    op.stage = Stage.COMPLETED;
    op.response = state.response;
    op.completedAt = completedAt;
    this.operations.set(op.name, op);
  }

  /**
   * An unfinished operation of a previous scheduler, known again (stage QUEUED) while its action is
   * checked again; `resume` follows (or `fail`). A client has the abandoned-operation grace to come
   * back with WaitExecution. `taskId`: the task a previous scheduler handed out for it, whose report
   * waits until `resume` decides.
   */
  restorePending(name: string, instanceName: string, actionDigest: Digest, invocationId: string, taskId?: string): void {
    const op = new OperationRecord(
      name,
      instanceName,
      actionDigest,
      this.recordedOperation(name, instanceName, actionDigest, { ...NO_METADATA, invocationId }),
    );
    op.stage = Stage.QUEUED;
    op.abandonedAt = this.clock.now();
    this.operations.set(name, op);
    if (taskId) this.awaitedTasks.add(taskId);
  }

  /**
   * Runs a restored operation's action again, or, with `task`, takes it as running there: the executor
   * that still runs it reports it (and the result is used) if it calls within the heartbeat deadline;
   * otherwise it is queued again.
   */
  resume(name: string, request: SubmitRequest, task?: ResumedTask): OperationState {
    if (task) this.awaitedTasks.delete(task.taskId);
    const op = this.record(name);
    if (op.done || op.execution) return op.snapshot();
    const dedupKey = request.doNotCache ? undefined : `${request.instanceName}\n${digestKey(request.validated.actionDigest)}`;
    const existing = dedupKey === undefined ? undefined : this.inFlight.get(dedupKey);
    if (!task || existing) return this.submit(name, request);
    const now = this.clock.now();
    const execution: Execution = {
      dedupKey,
      instanceName: request.instanceName,
      validated: request.validated,
      platformKey: this.rules.queueKey(request.validated.platform),
      invocationId: request.invocationId,
      priority: request.priority,
      operations: new Set(),
      state: 'running',
      attempts: 1,
      task: { id: task.taskId, executorId: task.executorId, assignedAt: now },
      queuedAt: now,
    };
    if (dedupKey !== undefined) this.inFlight.set(dedupKey, execution);
    this.orphans.set(task.taskId, { execution, since: now });
    this.attach(op, execution);
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
    if (this.operations.delete(name)) this.observer.operationForgotten?.(name);
  }

  // ---- Worker protocol side ----

  /** What is known about a task, for writing its result to the action cache; undefined when unknown. */
  taskIdentity(executorId: string, taskId: string): TaskIdentity | undefined {
    const execution = this.executors.get(executorId)?.tasks.get(taskId) ?? this.orphans.get(taskId)?.execution;
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
      if (this.awaitedTasks.has(report.taskId)) continue;
      const execution = executor.tasks.get(report.taskId) ?? this.adopt(executor, report.taskId);
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
    // A resumed task whose executor did not come back: it runs again.
    for (const [taskId, orphan] of [...this.orphans]) {
      if (now - orphan.since <= silence) continue;
      this.orphans.delete(taskId);
      orphan.execution.task = undefined;
      this.requeue(orphan.execution);
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
        this.observer.operationForgotten?.(op.name);
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
    if (stage === Stage.QUEUED) {
      op.recorded.stage = 'QUEUED';
      op.recorded.queuedMs ??= this.clock.now();
    } else if (stage === Stage.EXECUTING) {
      op.recorded.stage = 'EXECUTING';
      const task = op.execution?.task;
      if (task) {
        op.recorded.startedMs = task.assignedAt;
        op.recorded.worker = this.executors.get(task.executorId)?.displayName || task.executorId;
      }
    }
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
    recordCompletion(op.recorded, response, op.completedAt);
    this.observer.operationFinished?.(response, op.snapshot());
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

  /** A resumed task its executor reports: from now on it is that executor's. */
  private adopt(executor: ExecutorRecord, taskId: string): Execution | undefined {
    const orphan = this.orphans.get(taskId);
    if (orphan?.execution.state !== 'running') return undefined;
    this.orphans.delete(taskId);
    const { execution } = orphan;
    execution.task = { id: taskId, executorId: executor.id, assignedAt: execution.task?.assignedAt ?? this.clock.now() };
    executor.tasks.set(taskId, execution);
    this.running.add(execution);
    return execution;
  }

  /** Tells the executor running the execution to stop it. */
  private stopTask(execution: Execution): void {
    const task = execution.task;
    if (!task) return;
    execution.task = undefined;
    this.running.delete(execution);
    // Resumed and never reported: the executor that may run it hears nothing; its late report is refused.
    if (this.orphans.delete(task.id)) return;
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
    while (!this.draining && executor.tasks.size < executor.slots) {
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
        toolInvocationId: execution.invocationId,
        inputDirectories: validated.inputDirectories ? [...validated.inputDirectories] : [],
      });
      this.observer.taskAssigned?.(
        [...execution.operations].map((o) => o.snapshot()),
        { id: executor.id, name: executor.displayName || executor.id },
        taskId,
      );
      for (const op of execution.operations) this.setStage(op, Stage.EXECUTING);
    }
    return out;
  }
}

function executionSnapshot(execution: Execution): ExecutionSnapshot {
  return {
    instanceName: execution.instanceName,
    actionDigest: execution.validated.actionDigest,
    platform: execution.validated.platform,
    invocationId: execution.invocationId,
    operationNames: [...execution.operations].map((op) => op.name),
    queuedAt: execution.queuedAt,
    priority: execution.priority,
    ...(execution.task ? { assignedAt: execution.task.assignedAt } : {}),
  };
}

/** Notes an operation's end in its history entry (the result decoded with defaults, as pages read it). */
function recordCompletion(recorded: RecordedOperation, response: reapi.ExecuteResponseInit, nowMs: number): void {
  recorded.stage = 'COMPLETED';
  recorded.completedMs = nowMs;
  recorded.cachedResult = response.cachedResult === true;
  recorded.status = { code: response.status?.code ?? Code.OK, message: response.status?.message ?? '' };
  if (response.result) recorded.result = reapi.ActionResult.decode(reapi.ActionResult.encode(response.result));
}
