import type * as grpc from '@grpc/grpc-js';
import {
  grpcStatusOf,
  InvalidArgumentError,
  NotFoundError,
  parseDigest,
  reapi,
  type Digest,
} from '../../src/core/index.js';
import { toServiceError, withContext } from '../grpc-status.js';
import { reportUnexpected, type ServiceContext } from '../service-context.js';
import { checkDigestFunction } from '../storage-instances.js';
import { validateAction } from './action-validator.js';
import type { ExecutionScheduler, OperationState } from './execution-scheduler.js';
import { operationMessage } from './operation-message.js';

export const REQUEST_METADATA_KEY = 'build.bazel.remote.execution.v2.requestmetadata-bin';

/** RequestMetadata's tool_invocation_id from the call's headers ('' when absent or unreadable). */
export function invocationIdOf(metadata: grpc.Metadata): string {
  const raw = metadata.get(REQUEST_METADATA_KEY)[0];
  if (!Buffer.isBuffer(raw)) return '';
  try {
    return reapi.RequestMetadata.decode(raw).toolInvocationId;
  } catch {
    return '';
  }
}

/**
 * Streams an operation to a client until it is done, then ends the call. A client that goes away
 * stops watching; the scheduler cancels the execution if nobody else waits for it.
 */
export function streamOperation(scheduler: ExecutionScheduler, name: string, call: grpc.ServerWritableStream<unknown, unknown>): void {
  let stop: (() => void) | undefined;
  let ended = false;
  const finish = () => {
    ended = true;
    stop?.();
  };
  call.on('cancelled', finish);
  call.on('close', finish);
  stop = scheduler.watch(name, (op) => {
    if (ended || call.cancelled) return;
    call.write(operationMessage(op));
    if (op.done) {
      ended = true;
      queueMicrotask(() => stop?.());
      call.end();
    }
  });
  if (ended) stop();
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
    if (!call.cancelled) call.emit('error', toServiceError(reportUnexpected(ctx, method, withContext(e, method))));
  };
  return {
    Execute: (call) => {
      const request = call.request;
      void (async () => {
        const instance = ctx.instances.get(request.instanceName);
        checkDigestFunction(request.digestFunction);
        const actionDigest = parseDigest(request.actionDigest, 'action_digest');
        const priority = request.executionPolicy?.priority ?? 0;
        // The cache first: a cached result needs neither the inputs nor their validation.
        let cached: reapi.ActionResult | undefined;
        try {
          cached = request.skipCacheLookup ? undefined : await lookUpActionCache(ctx, request.instanceName, actionDigest);
        } catch (e) {
          // The cache could not be read: run the action rather than fail the build.
          ctx.log.warn(`Execute: action cache lookup of ${actionDigest.hash} failed: ${grpcStatusOf(e).message}`);
        }
        if (cached) {
          const op = scheduler.begin(request.instanceName, actionDigest);
          streamOperation(scheduler, op.name, call);
          scheduler.finishFromCache(op.name, cached);
          return;
        }
        const validated = await validateAction(instance.cas, actionDigest, scheduler.config);
        const op: OperationState = scheduler.begin(request.instanceName, actionDigest);
        streamOperation(scheduler, op.name, call);
        if (call.cancelled) {
          scheduler.cancel(op.name);
          return;
        }
        scheduler.submit(op.name, {
          instanceName: request.instanceName,
          validated,
          priority,
          invocationId: invocationIdOf(call.metadata),
          doNotCache: validated.action.doNotCache,
        });
      })().catch((e: unknown) => fail(call, 'Execute', e));
    },
    WaitExecution: (call) => {
      try {
        if (call.request.name === '') throw new InvalidArgumentError('name: must name an operation');
        streamOperation(scheduler, call.request.name, call);
      } catch (e) {
        fail(call, 'WaitExecution', e);
      }
    },
  };
}
