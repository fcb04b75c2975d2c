import type * as grpc from '@grpc/grpc-js';
import type { LogFields } from '../../src/core/log/index.js';
import { grpcStatusOf, InvalidArgumentError, NotFoundError, parseDigest, reapi, type Digest } from '../../src/core/index.js';
import { toServiceError, withContext } from '../grpc-status.js';
import { reportUnexpected, type ServiceContext } from '../service-context.js';
import { checkDigestFunction } from '../storage-instances.js';
import { invocationIdOf } from '../request-metadata.js';
import { getOrNull, validateAction } from './action-validator.js';
import type { ExecutionScheduler, OperationState } from './execution-scheduler.js';
import { operationMessage } from './operation-message.js';

const Stage = reapi.ExecutionStage_Value;

/** The fields of a log line about `op`: its name, action digest and the client's invocation id. */
export function operationFields(op: OperationState): LogFields {
  return { operation: op.name, actionDigest: `${op.actionDigest.hash}/${op.actionDigest.sizeBytes}`, invocationId: op.invocationId };
}

/**
 * Streams an operation to a client until it is done, then ends the call. Intermediate stages are
 * coalesced: `delayMs` after a change the stage current then is sent, if it is not the last one sent
 * and the operation is not done yet (REAPI lets a server skip stages), so an action that finishes
 * within `delayMs` costs one message; the final Operation is sent at once. `sendCurrent`: the state at
 * the time of the call goes at once too (WaitExecution: REAPI asks for the current status first).
 * A client that goes away stops watching; the scheduler cancels the execution if nobody else waits
 * for it.
 */
function streamOperation(
  scheduler: ExecutionScheduler,
  name: string,
  call: grpc.ServerWritableStream<unknown, unknown>,
  options: { readonly delayMs: number; readonly sendCurrent?: boolean },
): void {
  const { delayMs } = options;
  let first = options.sendCurrent === true;
  let stop: (() => void) | undefined;
  let ended = false;
  let latest: OperationState | undefined;
  let sentStage: reapi.ExecutionStage_Value | undefined;
  let timer: NodeJS.Timeout | undefined;
  const write = (op: OperationState) => {
    sentStage = op.stage;
    call.write(operationMessage(op));
  };
  const flush = () => {
    timer = undefined;
    if (ended || call.cancelled || !latest) return;
    if (latest.stage !== sentStage) write(latest);
  };
  const finish = () => {
    ended = true;
    clearTimeout(timer);
    stop?.();
  };
  call.on('cancelled', finish);
  call.on('close', finish);
  stop = scheduler.watch(name, (op) => {
    if (ended || call.cancelled) return;
    if (op.done) {
      ended = true;
      clearTimeout(timer);
      write(op);
      queueMicrotask(() => stop?.());
      call.end();
    } else if (delayMs <= 0 || first) {
      first = false;
      write(op);
    } else {
      latest = op;
      timer ??= setTimeout(flush, delayMs);
    }
  });
  if (ended) stop();
}

/** Whether the Action asks not to be cached; false when it does not decode (validation says why). */
function doNotCache(actionBytes: Buffer): boolean {
  try {
    return reapi.Action.decode(actionBytes).doNotCache;
  } catch {
    return false;
  }
}

async function lookUpActionCache(ctx: ServiceContext, instanceName: string, digest: Digest): Promise<reapi.ActionResult | undefined> {
  try {
    return reapi.ActionResult.decode(await ctx.instances.get(instanceName).actionCache.get(digest));
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/** build.bazel.remote.execution.v2.Execution: Execute and WaitExecution. */
export function executionService(ctx: ServiceContext, scheduler: ExecutionScheduler): reapi.ExecutionServer {
  const fail = (call: grpc.ServerWritableStream<unknown, unknown>, method: string, e: unknown) => {
    if (!call.cancelled) call.emit('error', toServiceError(reportUnexpected(ctx, method, withContext(e, method), call.metadata)));
  };
  return {
    Execute: (call) => {
      const request = call.request;
      void (async () => {
        const instance = ctx.instances.get(request.instanceName);
        checkDigestFunction(request.digestFunction);
        const actionDigest = parseDigest(request.actionDigest, 'action_digest');
        const priority = request.executionPolicy?.priority ?? 0;
        // A do_not_cache Action's result is never in the cache (the flag is part of its digest, and
        // such results are not stored): the Action, read first, tells whether to look.
        const actionBytes = await getOrNull(instance.cas, actionDigest);
        // The cache first: a cached result needs neither the inputs nor their validation.
        let cached: reapi.ActionResult | undefined;
        try {
          const lookUp = !request.skipCacheLookup && !(actionBytes !== null && doNotCache(actionBytes));
          cached = lookUp ? await lookUpActionCache(ctx, request.instanceName, actionDigest) : undefined;
        } catch (e) {
          // The cache could not be read: run the action rather than fail the build.
          ctx.log.warn(`Execute: action cache lookup of ${actionDigest.hash} failed: ${grpcStatusOf(e).message}`);
        }
        const invocationId = invocationIdOf(call.metadata);
        if (cached) {
          const op = scheduler.begin(request.instanceName, actionDigest, invocationId);
          streamOperation(scheduler, op.name, call, { delayMs: scheduler.config.stageUpdateDelayMs });
          scheduler.finishFromCache(op.name, cached);
          return;
        }
        const validated = await validateAction(instance.cas, actionDigest, scheduler.config, actionBytes);
        scheduler.checkQueueRoom(request.instanceName, validated, validated.action.doNotCache);
        const op: OperationState = scheduler.begin(request.instanceName, actionDigest, invocationId);
        streamOperation(scheduler, op.name, call, { delayMs: scheduler.config.stageUpdateDelayMs });
        if (call.cancelled) {
          scheduler.cancel(op.name);
          return;
        }
        const submitted = scheduler.submit(op.name, {
          instanceName: request.instanceName,
          validated,
          priority,
          invocationId,
          doNotCache: validated.action.doNotCache,
        });
        if (!submitted.done)
          ctx.log.info(`Execute: ${submitted.stage === Stage.QUEUED ? 'queued' : 'joined the same action, running'}`, operationFields(submitted));
      })().catch((e: unknown) => fail(call, 'Execute', e));
    },
    WaitExecution: (call) => {
      try {
        if (call.request.name === '') throw new InvalidArgumentError('name: must name an operation');
        streamOperation(scheduler, call.request.name, call, { delayMs: scheduler.config.stageUpdateDelayMs, sendCurrent: true });
      } catch (e) {
        fail(call, 'WaitExecution', e);
      }
    },
  };
}
