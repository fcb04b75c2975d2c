import type * as grpc from '@grpc/grpc-js';
import { grpcStatusOf, googleRpc } from '../src/core/index.js';
import type { CacheServerConfig } from './cache-server-config.js';
import type { ConcurrencyLimit } from './concurrency-limit.js';
import { toServiceError, withContext } from './grpc-status.js';
import type { InFlightLimiter } from './in-flight-limiter.js';
import { invocationIdOf } from './request-metadata.js';
import type { ServerLog } from '../src/core/log/index.js';
import type { StorageInstances } from './storage-instances.js';

/** Where the server's logs go (pino lines on stderr for `kiln cluster up`, a buffer in tests). */
export type { ServerLog } from '../src/core/log/index.js';

/** What every service of the cache server shares. */
export interface ServiceContext {
  readonly instances: StorageInstances;
  readonly config: CacheServerConfig;
  readonly limiter: InFlightLimiter;
  /** Bounds blob operations of batch RPCs across all requests (open files, memory). */
  readonly storageOps: ConcurrencyLimit;
  readonly log: ServerLog;
}

/**
 * A unary handler: admission control (`bytes` of the request held while it runs), errors mapped to
 * their gRPC status with `method` as context, unexpected ones logged.
 */
export function unaryHandler<Req, Res>(
  ctx: ServiceContext,
  method: string,
  bytes: (request: Req) => number,
  handle: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let admission;
    try {
      admission = ctx.limiter.admit(method, bytes(call.request));
    } catch (e) {
      callback(toServiceError(e));
      return;
    }
    handle(call.request, call).then(
      (response) => {
        admission.release();
        callback(null, response);
      },
      (e: unknown) => {
        admission.release();
        callback(toServiceError(reportUnexpected(ctx, method, withContext(e, method), call.metadata)));
      },
    );
  };
}

/**
 * Logs errors that are not the client's fault (INTERNAL), with the client's invocation id when the
 * call's `metadata` has one, then returns the error unchanged.
 */
export function reportUnexpected(ctx: ServiceContext, method: string, e: unknown, metadata?: grpc.Metadata): unknown {
  if (grpcStatusOf(e).code === googleRpc.Code.INTERNAL) {
    ctx.log.warn(`${method} failed: ${(e as Error)?.message ?? String(e)}`, { method, invocationId: invocationIdOf(metadata) });
  }
  return e;
}
