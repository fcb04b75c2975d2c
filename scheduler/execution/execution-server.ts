import { kilnWorker, longrunning, reapi, systemClock, type Clock } from '../../src/core/index.js';
import type { ExecutionCapabilitiesSource } from '../capabilities-service.js';
import type { ServiceRegistration } from '../grpc-server.js';
import type { ServiceContext } from '../service-context.js';
import type { Registry } from '../../src/core/metrics/index.js';
import { ExecutionScheduler } from './execution-scheduler.js';
import { schedulerObserver, watchScheduler } from './scheduler-metrics.js';
import { executionService } from './execution-service.js';
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
  /** Stops applying deadlines (call after the gRPC server stopped). */
  close(): void;
}

export function createExecutionServer(options: ExecutionServerOptions = {}): ExecutionServer {
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics;
  const observer = combinedObserver(metrics ? schedulerObserver(metrics) : {}, options.log ? schedulerLogObserver(options.log) : {});
  const scheduler = new ExecutionScheduler({ ...DEFAULT_SCHEDULER_CONFIG, ...options.config }, clock, undefined, observer);
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
    services: (ctx) => [
      registration('build.bazel.remote.execution.v2.Execution', reapi.ExecutionService, executionService(ctx, scheduler)),
      registration('google.longrunning.Operations', longrunning.OperationsService, operationsService(ctx, scheduler)),
      registration('kiln.worker.v1.WorkerService', kilnWorker.WorkerServiceService, workerService(ctx, scheduler)),
    ],
    capabilities: () => ({
      execEnabled: true,
      digestFunction: reapi.DigestFunction_Value.SHA256,
      digestFunctions: [reapi.DigestFunction_Value.SHA256],
      executionPriorityCapabilities: { priorities: [{ minPriority: -(2 ** 31), maxPriority: 2 ** 31 - 1 }] },
      supportedNodeProperties: [],
    }),
    close: () => {
      clearInterval(timer);
      unwatch();
    },
  };
}
