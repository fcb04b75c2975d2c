import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { kilnWorker, msFromDuration } from '../src/core/index.js';
import type { ActionExecutor } from './executor-metrics.js';
import { isRefusal, type SchedulerChannel } from './scheduler-connection.js';
import type { PlatformProperty } from './runners/runner.js';

export interface SynchronizeLoopOptions {
  /** The scheduler's address and credentials. */
  readonly channel: SchedulerChannel;
  readonly instanceName: string;
  readonly displayName: string;
  readonly platform: readonly PlatformProperty[];
  readonly slots: number;
  readonly executor: ActionExecutor;
  /** Where problems talking to the scheduler are reported. */
  readonly log: (message: string) => void;
  /** Told of each assignment as its task starts (the operator's log line that an action runs here). */
  readonly started?: (assignment: kilnWorker.Assignment) => void;
  /** The scheduler refused this executor's credentials: the loop has stopped (retrying cannot help). */
  readonly refused: (message: string) => void;
}

interface Task {
  stage: kilnWorker.TaskStage;
  response?: kilnWorker.TaskReportInit['response'];
  readonly abort: AbortController;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;
/** How long a stopping executor waits for the scheduler to take its aborted tasks back. */
const HAND_BACK_DEADLINE_MS = 2000;

/**
 * The executor's side of worker.proto: one Synchronize call outstanding at a time, carrying every
 * task's stage. The call is held by the scheduler while there is nothing to report (long poll);
 * a completed task cancels it and reports at once; other stage changes go with the next call. Assignments start tasks, `cancel_task_ids` abort
 * them. If the scheduler is unreachable the tasks keep running and the loop retries with backoff.
 */
export class SynchronizeLoop {
  readonly executorId = randomUUID();
  private readonly client: kilnWorker.WorkerServiceClient;
  private readonly tasks = new Map<string, Task>();
  private current: grpc.ClientUnaryCall | undefined;
  /** Whether the outstanding call may be held (only those are cancelled to report sooner). */
  private currentWaits = false;
  private dirty = false;
  private stopped = false;
  /** Asking for no new work (slots 0) until the tasks it holds are done and reported. */
  private draining = false;
  private drained: (() => void) | undefined;
  private wakeRetry: (() => void) | undefined;
  /** The scheduler's heartbeat interval, from its last answer; bounds each call (a dead peer must not stall us). */
  private heartbeatMs = 10_000;
  private loop?: Promise<void>;

  constructor(private readonly options: SynchronizeLoopOptions) {
    const Client = grpc.makeGenericClientConstructor(kilnWorker.WorkerServiceService as unknown as grpc.ServiceDefinition, 'WorkerService');
    this.client = new Client(options.channel.address, options.channel.credentials, options.channel.options) as unknown as kilnWorker.WorkerServiceClient;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops asking for work, aborts running tasks and closes the connection. After a drain whose time
   * ran out, the aborted tasks are handed back: a last call lists none of them (worker.proto, LOST),
   * so the scheduler queues them again at once instead of after the heartbeat deadline. (Without a
   * drain the executor stops as if it vanished.)
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const aborted = this.tasks.size;
    for (const task of this.tasks.values()) task.abort.abort();
    this.tasks.clear();
    this.current?.cancel();
    this.wakeRetry?.();
    await this.loop;
    if (aborted > 0 && this.draining) await this.handBack();
    this.client.close();
  }

  /** One last call: 0 slots, no tasks; a failure only leaves them to the heartbeat deadline. */
  private handBack(): Promise<void> {
    return new Promise<void>((resolve) => {
      const request: kilnWorker.SynchronizeRequestInit = {
        executorId: this.executorId,
        displayName: this.options.displayName,
        instanceName: this.options.instanceName,
        platformProperties: this.options.platform.map((p) => ({ name: p.name, value: p.value })),
        slots: 0,
        tasks: [],
        mayWait: false,
      };
      this.client.Synchronize(request, new grpc.Metadata(), { deadline: Date.now() + HAND_BACK_DEADLINE_MS }, () => resolve());
    });
  }

  /**
   * Stops taking work and resolves once every task it holds has completed and the scheduler has
   * confirmed the report (at once when it holds none). The loop keeps running: `stop` ends it.
   */
  drain(): Promise<void> {
    this.draining = true;
    // The next call says slots 0, so the scheduler assigns nothing more. The call in flight is not
    // cancelled: its answer may carry assignments the scheduler already counts as running here, and
    // those run too. Done only once a call that said 0 slots was answered, with no task left.
    this.dirty = true;
    return new Promise<void>((resolve) => (this.drained = resolve));
  }

  get runningTasks(): number {
    return this.tasks.size;
  }

  private async run(): Promise<void> {
    let backoff = RETRY_MIN_MS;
    while (!this.stopped) {
      const reports = [...this.tasks].map(
        ([taskId, t]): kilnWorker.TaskReportInit => ({ taskId, stage: t.stage, ...(t.response ? { response: t.response } : {}) }),
      );
      const mayWait = !this.dirty;
      this.dirty = false;
      const announcedDrain = this.draining;
      try {
        const response = await this.synchronize({
          executorId: this.executorId,
          displayName: this.options.displayName,
          instanceName: this.options.instanceName,
          platformProperties: this.options.platform.map((p) => ({ name: p.name, value: p.value })),
          slots: announcedDrain ? 0 : this.options.slots,
          tasks: reports,
          mayWait,
        });
        backoff = RETRY_MIN_MS;
        if (response.heartbeatInterval) {
          this.heartbeatMs = Math.max(100, msFromDuration(response.heartbeatInterval, 'heartbeat_interval'));
        }
        for (const r of reports) if (r.stage === kilnWorker.TaskStage.COMPLETED) this.tasks.delete(r.taskId!);
        for (const id of response.cancelTaskIds) {
          this.tasks.get(id)?.abort.abort();
          this.tasks.delete(id);
        }
        // Assigned before the scheduler heard of the drain: run them too, the drain waits for them.
        for (const assignment of response.assignments) this.startTask(assignment);
        if (announcedDrain && this.tasks.size === 0) this.drained?.();
      } catch (e) {
        const err = e as grpc.ServiceError;
        if (err.code === grpc.status.CANCELLED) continue; // we cancelled the long poll to report
        this.dirty = true;
        if (this.stopped) break;
        if (isRefusal(err.code)) {
          this.stopped = true;
          for (const task of this.tasks.values()) task.abort.abort();
          this.options.refused(
            `the scheduler refused executor ${this.options.displayName} (${grpc.status[err.code]}: ${err.details}); ` +
              'give it credentials with the worker role: a token (--token-file) or a client certificate (--tls-certificate, --tls-key)',
          );
          break;
        }
        this.options.log(`executor ${this.options.displayName}: Synchronize failed (${err.details ?? err.message}); retrying in ${backoff} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoff);
          this.wakeRetry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeRetry = undefined;
        backoff = Math.min(RETRY_MAX_MS, backoff * 2);
      }
    }
  }

  private synchronize(request: kilnWorker.SynchronizeRequestInit): Promise<kilnWorker.SynchronizeResponse> {
    return new Promise((resolve, reject) => {
      this.currentWaits = request.mayWait === true;
      this.current = this.client.Synchronize(request, new grpc.Metadata(), { deadline: Date.now() + 2 * this.heartbeatMs }, (err, res) => {
        this.current = undefined;
        this.currentWaits = false;
        if (err) reject(err);
        else resolve(res!);
      });
    });
  }

  /** Something to report: end the held call now. */
  private changed(): void {
    this.dirty = true;
    if (this.currentWaits) this.current?.cancel();
  }

  private startTask(assignment: kilnWorker.Assignment): void {
    if (this.tasks.has(assignment.taskId)) return;
    const task: Task = { stage: kilnWorker.TaskStage.FETCHING_INPUTS, abort: new AbortController() };
    this.tasks.set(assignment.taskId, task);
    this.options.started?.(assignment);
    // Intermediate stages ride along with the next call (the scheduler already shows the operation
    // EXECUTING once assigned); only completion ends a held call, so a short action costs one round trip.
    const reportStage = (stage: kilnWorker.TaskStage) => {
      if (!task.abort.signal.aborted) task.stage = stage;
    };
    void this.options.executor.execute(assignment, reportStage, task.abort.signal).then((response) => {
      if (task.abort.signal.aborted || this.tasks.get(assignment.taskId) !== task) return;
      task.response = response;
      task.stage = kilnWorker.TaskStage.COMPLETED;
      this.changed();
    });
  }
}
