import { googleRpc, grpcStatusOf, reapi } from '../../src/core/index.js';
import type { ServiceContext } from '../service-context.js';
import type { ExecutionScheduler } from './execution-scheduler.js';
import { lookUpOrValidate, operationFields } from './execution-service.js';
import type { JournaledOperation } from './operation-journal.js';

/**
 * Puts the journal's operations back into a new scheduler: finished ones as they ended, unfinished
 * ones as QUEUED while `resumeOperations` checks their actions again. Returns the unfinished ones.
 */
export function restoreOperations(scheduler: ExecutionScheduler, operations: readonly JournaledOperation[]): JournaledOperation[] {
  const pending: JournaledOperation[] = [];
  for (const op of operations) {
    if (op.finished) {
      scheduler.restoreFinished({ ...op, stage: reapi.ExecutionStage_Value.COMPLETED, done: true, response: op.finished.response }, op.finished.at);
    } else {
      scheduler.restorePending(op.name, op.instanceName, op.actionDigest, op.invocationId, op.task?.taskId);
      pending.push(op);
    }
  }
  return pending;
}

/**
 * Resumes the unfinished operations of a previous scheduler as Execute would run them: answered from
 * the action cache if the result got there, else validated and queued again (or taken as running on
 * the executor that had it, which may still report it). One that cannot be checked (its blobs are
 * gone) ends with that error, as Execute would have answered.
 */
export async function resumeOperations(ctx: ServiceContext, scheduler: ExecutionScheduler, pending: readonly JournaledOperation[]): Promise<void> {
  for (const op of pending) {
    try {
      const checked = await lookUpOrValidate(ctx, scheduler, op.instanceName, op.actionDigest, op.skipCacheLookup || op.doNotCache);
      if ('cached' in checked) {
        scheduler.finishFromCache(op.name, checked.cached);
        continue;
      }
      const state = scheduler.resume(
        op.name,
        {
          instanceName: op.instanceName,
          validated: checked.validated,
          priority: op.priority,
          invocationId: op.invocationId,
          doNotCache: checked.validated.action.doNotCache,
          skipCacheLookup: op.skipCacheLookup,
        },
        op.task,
      );
      ctx.log.info(`resumed after a restart: ${op.task ? 'waiting for the report of the executor that ran it' : 'queued again'}`, operationFields(state));
    } catch (e) {
      const status = grpcStatusOf(e);
      try {
        scheduler.fail(op.name, { code: status.code === googleRpc.Code.OK ? googleRpc.Code.INTERNAL : status.code, message: status.message });
      } catch {
        // Deleted meanwhile: nothing to fail.
      }
    }
  }
}
