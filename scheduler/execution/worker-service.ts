import { grpcStatusOf, googleRpc, kilnWorker, reapi } from '../../src/core/index.js';
import { toServiceError } from '../grpc-status.js';
import type { ServiceContext } from '../service-context.js';
import type { ExecutionScheduler } from './execution-scheduler.js';

/**
 * Whether a result may be cached: REAPI recommends caching only successful runs, and never those of
 * actions marked do_not_cache.
 */
function cacheable(response: reapi.ExecuteResponse, doNotCache: boolean): boolean {
  const ok = (response.status?.code ?? googleRpc.Code.OK) === googleRpc.Code.OK;
  return !doNotCache && ok && response.result !== null && response.result !== undefined && response.result.exitCode === 0;
}

/**
 * kiln.worker.v1.WorkerService: applies an executor's Synchronize call to the scheduler. Results are
 * written to the action cache before the operations learn of them, so a client that sees the result
 * and asks again is answered from the cache. An idle executor's call is held until work arrives, one
 * of its tasks is cancelled, the call is cancelled, or `maxSynchronizeWaitMs` passes.
 */
export function workerService(ctx: ServiceContext, scheduler: ExecutionScheduler): kilnWorker.WorkerServiceServer {
  return {
    Synchronize: (call, callback) => {
      const request = call.request;
      void (async () => {
        for (const report of request.tasks) {
          if (report.stage !== kilnWorker.TaskStage.COMPLETED || !report.response) continue;
          const identity = scheduler.taskIdentity(request.executorId, report.taskId);
          if (!identity || !cacheable(report.response, identity.doNotCache)) continue;
          try {
            const result = reapi.ActionResult.encode(report.response.result!);
            await ctx.instances.get(identity.instanceName).actionCache.put(identity.actionDigest, result);
          } catch (e) {
            // The result still reaches the clients; only the cache entry is lost.
            ctx.log.warn(`Synchronize: writing the result of ${identity.actionDigest.hash} to the action cache failed: ${grpcStatusOf(e).message}`);
          }
        }
        const outcome = scheduler.synchronize(request);
        if (!outcome.mayHold || call.cancelled) return outcome.response;
        return await new Promise<kilnWorker.SynchronizeResponseInit>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            if (call.cancelled) return;
            unhold();
            resolve(scheduler.release(request.executorId));
          };
          const timer = setTimeout(done, scheduler.config.maxSynchronizeWaitMs);
          const unhold = scheduler.hold(request.executorId, () => setImmediate(done));
          call.on('cancelled', () => {
            // The executor gave up this call to report something: nothing taken from the queue is lost,
            // since nothing was answered; cancellations stay pending for its next call.
            clearTimeout(timer);
            unhold();
          });
        });
      })().then(
        (response) => callback(null, response),
        (e: unknown) => callback(toServiceError(e)),
      );
    },
  };
}
