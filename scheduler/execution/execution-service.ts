import type * as grpc from '@grpc/grpc-js';
import type { LogFields } from '../../src/core/log/index.js';
import { grpcStatusOf, InvalidArgumentError, NotFoundError, parseDigest, reapi, UnavailableError, type Digest } from '../../src/core/index.js';
import { toServiceError, withContext } from '../grpc-status.js';
import { reportUnexpected, type ServiceContext } from '../service-context.js';
import { checkDigestFunction } from '../storage-instances.js';
import { REQUEST_METADATA_KEY } from '../request-metadata.js';
import { getOrNull, validateAction, type ValidatedAction } from './action-validator.js';
import type { ExecutionScheduler, OperationState } from './execution-scheduler.js';
import { operationMessage } from './operation-message.js';
import { operationMetadataOf, type OperationMetadata } from './operation-history.js';

const Stage = reapi.ExecutionStage_Value;

/** The fields of a log line about `op`: its name, action digest and the client's invocation id. */
export function operationFields(op: OperationState): LogFields {
  return { operation: op.name, actionDigest: `${op.actionDigest.hash}/${op.actionDigest.sizeBytes}`, invocationId: op.invocationId };
}

/** The call's RequestMetadata, for the history of recent operations. */
function metadataOf(metadata: grpc.Metadata): OperationMetadata {
  const raw = metadata.get(REQUEST_METADATA_KEY)[0];
  return operationMetadataOf(Buffer.isBuffer(raw) ? raw : undefined);
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
  options: { readonly delayMs: number; readonly sendCurrent?: boolean; readonly live: LiveStreams },
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
    options.live.delete(cut);
  };
  // The scheduler stops: the client hears UNAVAILABLE and comes back with WaitExecution (REAPI's retry).
  const cut = () => {
    if (ended || call.cancelled) return;
    finish();
    call.emit('error', toServiceError(new UnavailableError('the scheduler is restarting; retry with WaitExecution')));
  };
  options.live.add(cut);
  call.on('cancelled', finish);
  call.on('close', finish);
  stop = scheduler.watch(name, (op) => {
    if (ended || call.cancelled) return;
    if (op.done) {
      ended = true;
      clearTimeout(timer);
      options.live.delete(cut);
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

/**
 * An action's cached result (unless `skipCacheLookup` or do_not_cache), or else the action checked
 * for queueing: what Execute does before an operation exists, and a restarted scheduler again.
 */
export async function lookUpOrValidate(
  ctx: ServiceContext,
  scheduler: ExecutionScheduler,
  instanceName: string,
  actionDigest: Digest,
  skipCacheLookup: boolean,
): Promise<{ cached: reapi.ActionResult } | { validated: ValidatedAction }> {
  const instance = ctx.instances.get(instanceName);
  // A do_not_cache Action's result is never in the cache (the flag is part of its digest, and
  // such results are not stored): the Action, read first, tells whether to look.
  const actionBytes = await getOrNull(instance.cas, actionDigest);
  // The cache first: a cached result needs neither the inputs nor their validation.
  try {
    const lookUp = !skipCacheLookup && !(actionBytes !== null && doNotCache(actionBytes));
    const cached = lookUp ? await lookUpActionCache(ctx, instanceName, actionDigest) : undefined;
    if (cached) return { cached };
  } catch (e) {
    // The cache could not be read: run the action rather than fail the build.
    ctx.log.warn(`Execute: action cache lookup of ${actionDigest.hash} failed: ${grpcStatusOf(e).message}`);
  }
  return { validated: await validateAction(instance.cas, actionDigest, scheduler.config, actionBytes) };
}

/** The Execute and WaitExecution streams open now, each with the call that cuts it (UNAVAILABLE) when the scheduler stops. */
export type LiveStreams = Set<() => void>;

async function lookUpActionCache(ctx: ServiceContext, instanceName: string, digest: Digest): Promise<reapi.ActionResult | undefined> {
  try {
    return reapi.ActionResult.decode(await ctx.instances.get(instanceName).actionCache.get(digest));
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/** build.bazel.remote.execution.v2.Execution: Execute and WaitExecution. */
export function executionService(ctx: ServiceContext, scheduler: ExecutionScheduler, live: LiveStreams = new Set()): reapi.ExecutionServer {
  const fail = (call: grpc.ServerWritableStream<unknown, unknown>, method: string, e: unknown) => {
    if (!call.cancelled) call.emit('error', toServiceError(reportUnexpected(ctx, method, withContext(e, method), call.metadata)));
  };
  return {
    Execute: (call) => {
      const request = call.request;
      void (async () => {
        ctx.instances.get(request.instanceName); // an unknown instance is refused first
        checkDigestFunction(request.digestFunction);
        const actionDigest = parseDigest(request.actionDigest, 'action_digest');
        const priority = request.executionPolicy?.priority ?? 0;
        if (scheduler.isDraining) throw new UnavailableError('the scheduler is shutting down; retry');
        const checked = await lookUpOrValidate(ctx, scheduler, request.instanceName, actionDigest, request.skipCacheLookup);
        const metadata = metadataOf(call.metadata);
        const { invocationId } = metadata;
        if ('cached' in checked) {
          const op = scheduler.begin(request.instanceName, actionDigest, metadata);
          streamOperation(scheduler, op.name, call, { delayMs: scheduler.config.stageUpdateDelayMs, live });
          scheduler.finishFromCache(op.name, checked.cached);
          return;
        }
        const { validated } = checked;
        scheduler.checkQueueRoom(request.instanceName, validated, validated.action.doNotCache);
        const op: OperationState = scheduler.begin(request.instanceName, actionDigest, metadata);
        streamOperation(scheduler, op.name, call, { delayMs: scheduler.config.stageUpdateDelayMs, live });
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
          skipCacheLookup: request.skipCacheLookup,
        });
        if (!submitted.done)
          ctx.log.info(`Execute: ${submitted.stage === Stage.QUEUED ? 'queued' : 'joined the same action, running'}`, operationFields(submitted));
      })().catch((e: unknown) => fail(call, 'Execute', e));
    },
    WaitExecution: (call) => {
      try {
        if (call.request.name === '') throw new InvalidArgumentError('name: must name an operation');
        streamOperation(scheduler, call.request.name, call, { delayMs: scheduler.config.stageUpdateDelayMs, sendCurrent: true, live });
      } catch (e) {
        fail(call, 'WaitExecution', e);
      }
    },
  };
}
