import { kilnWorker, longrunning, reapi, systemClock, type Clock } from '../../src/core/index.js';
import type { ExecutionCapabilitiesSource } from '../capabilities-service.js';
import type { ServiceRegistration } from '../grpc-server.js';
import type { ServiceContext } from '../service-context.js';
import type { Registry } from '../../src/core/metrics/index.js';
import { ExecutionScheduler } from './execution-scheduler.js';
import { schedulerObserver, watchScheduler } from './scheduler-metrics.js';
import { executionService, type LiveStreams } from './execution-service.js';
import { OperationJournal } from './operation-journal.js';
import { restoreOperations, resumeOperations } from './operation-resume.js';
import { combinedObserver, schedulerLogObserver } from './scheduler-log.js';
import type { ServerLog } from '../../src/core/log/index.js';
import { operationsService } from './operations-service.js';
import { DEFAULT_SCHEDULER_CONFIG, type SchedulerConfig } from './scheduler-config.js';
import { workerService } from './worker-service.js';

export interface ExecutionServerOptions {
  readonly config?: Partial<SchedulerConfig>;
  readonly clock?: Clock;
  /** How often deadlines are applied; 200 ms by default. */
  readonly tickMs?: number;
  /** Where the scheduler's metrics go (queues, workers, actions, stage times); the server's registry (CacheServerOptions.metrics). */
  readonly metrics?: Registry;
  /** Where lines about operations go (queued, assigned, finished); none when absent. */
  readonly log?: ServerLog;
}

/** The execution half of the REAPI server, to be put on the cache server's port. */
export interface ExecutionServer {
  readonly scheduler: ExecutionScheduler;
  /** For CacheServerOptions.extraServices. */
  services(ctx: ServiceContext): ServiceRegistration[];
  /** For CacheServerOptions.executionCapabilities. */
  readonly capabilities: ExecutionCapabilitiesSource;
  /**
   * Takes no more work (Execute is UNAVAILABLE, nothing more is assigned), lets running actions
   * finish for up to `graceMs`, then cuts the open Execute and WaitExecution streams with UNAVAILABLE
   * (clients come back with WaitExecution, to this scheduler's successor when the operations are
   * journaled). Resolves with the number of actions still running.
   */
  drain(graceMs: number): Promise<number>;
  /** Stops applying deadlines and closes the journal (call after the gRPC server stopped). */
  close(): void;
}

export function createExecutionServer(options: ExecutionServerOptions = {}): ExecutionServer {
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics;
  const config = { ...DEFAULT_SCHEDULER_CONFIG, ...options.config };
  const warn = (message: string) => options.log?.warn(message);
  const opened = config.operationsFile ? OperationJournal.open(config.operationsFile, clock, config.completedOperationRetentionMs, warn) : undefined;
  const observer = combinedObserver(
    // The journal first: an operation is on disk before a client hears of its end.
    opened ? opened.journal.observer() : {},
    metrics ? schedulerObserver(metrics) : {},
    options.log ? schedulerLogObserver(options.log) : {},
  );
  const scheduler = new ExecutionScheduler(config, clock, undefined, observer);
  const pending = opened ? restoreOperations(scheduler, opened.operations) : [];
  if (opened && opened.operations.length > 0) {
    options.log?.info(
      `operations journal ${config.operationsFile}: ${opened.operations.length - pending.length} finished and ${pending.length} unfinished operation(s) of the previous scheduler`,
    );
  }
  let resumed = false;
  const live: LiveStreams = new Set();
  const unwatch = metrics ? watchScheduler(metrics, scheduler, clock) : () => {};
  const timer = setInterval(() => scheduler.tick(), options.tickMs ?? 200);
  timer.unref();
  const registration = (name: string, definition: object, implementation: object): ServiceRegistration => ({
    name,
    definition: definition as ServiceRegistration['definition'],
    implementation: implementation as ServiceRegistration['implementation'],
  });
  return {
    scheduler,
    services: (ctx) => {
      if (!resumed) {
        resumed = true;
        void resumeOperations(ctx, scheduler, pending);
      }
      return [
        registration('build.bazel.remote.execution.v2.Execution', reapi.ExecutionService, executionService(ctx, scheduler, live)),
        registration('google.longrunning.Operations', longrunning.OperationsService, operationsService(ctx, scheduler)),
        registration('kiln.worker.v1.WorkerService', kilnWorker.WorkerServiceService, workerService(ctx, scheduler)),
      ];
    },
    capabilities: () => ({
      execEnabled: true,
      digestFunction: reapi.DigestFunction_Value.SHA256,
      digestFunctions: [reapi.DigestFunction_Value.SHA256],
      executionPriorityCapabilities: { priorities: [{ minPriority: -(2 ** 31), maxPriority: 2 ** 31 - 1 }] },
      supportedNodeProperties: [],
    }),
    drain: async (graceMs) => {
      scheduler.drain();
      const deadline = clock.now() + graceMs;
      // A shutdown path, polled: the state machine has no events of its own for "nothing runs".
      while (scheduler.runningCount() > 0 && clock.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const cut of [...live]) cut();
      return scheduler.runningCount();
    },
    close: () => {
      clearInterval(timer);
      unwatch();
      opened?.journal.close();
    },
  };
}
