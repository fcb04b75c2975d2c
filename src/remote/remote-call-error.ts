import * as grpc from '@grpc/grpc-js';
import { digestKey, googleRpc, KilnError, parseDigestKey, unpackAny, type Digest } from '../core/index.js';

const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/**
 * A failed REAPI call as the client sees it: the gRPC status code (never downgraded), what was
 * being done and where, and the details REAPI servers attach: `google.rpc.RetryInfo` (how long to
 * wait before retrying RESOURCE_EXHAUSTED) and `google.rpc.PreconditionFailure` (the blobs an
 * Execute found missing, `MISSING` / `blobs/{hash}/{size}`).
 */
export class RemoteCallError extends KilnError {
  constructor(
    message: string,
    readonly code: grpc.status,
    readonly retryDelayMs?: number,
    readonly missingBlobs: readonly Digest[] = [],
    options?: ErrorOptions,
  ) {
    super(message, undefined, options);
  }

  get codeName(): string {
    return grpc.status[this.code] ?? String(this.code);
  }
}

export function isRemoteCallError(e: unknown): e is RemoteCallError {
  return e instanceof RemoteCallError;
}

/**
 * `err` of a failed call as a RemoteCallError; `what` says which call, to which endpoint. A new error
 * with `err` as its cause: `err` itself is never changed (one failure may be shared by several calls).
 */
export function remoteCallError(err: unknown, what: string): RemoteCallError {
  if (err instanceof RemoteCallError) return err;
  const service = err as Partial<grpc.ServiceError>;
  if (typeof service.code !== 'number') {
    return new RemoteCallError(`${what}: ${err instanceof Error ? err.message : String(err)}`, grpc.status.INTERNAL, undefined, [], { cause: err });
  }
  const { retryDelayMs, missing } = statusDetails(service.metadata);
  // @grpc/grpc-js appends an empty "Resolution note:" to connection failures; it says nothing.
  const detail = (service.details ?? '').replace(/\s*Resolution note:\s*$/, '') || grpc.status[service.code];
  return new RemoteCallError(`${what}: ${grpc.status[service.code]}: ${detail}`, service.code, retryDelayMs, missing, { cause: err });
}

/** A `google.rpc.Status` (an ExecuteResponse's, a batch item's) as a RemoteCallError. */
export function rpcStatusError(status: googleRpc.Status, what: string): RemoteCallError {
  const { retryDelayMs, missing } = detailsOf(status.details);
  const code = status.code as number as grpc.status;
  return new RemoteCallError(`${what}: ${grpc.status[code] ?? code}: ${status.message}`, code, retryDelayMs, missing);
}

function statusDetails(metadata: grpc.Metadata | undefined): { retryDelayMs?: number; missing: Digest[] } {
  const raw = metadata?.get(STATUS_DETAILS_KEY)[0];
  if (!(raw instanceof Buffer)) return { missing: [] };
  try {
    return detailsOf(googleRpc.Status.decode(raw).details);
  } catch {
    return { missing: [] }; // unreadable details add nothing; the code still counts
  }
}

function detailsOf(details: readonly { typeUrl?: string | null; value?: Uint8Array | null }[]): { retryDelayMs?: number; missing: Digest[] } {
  let retryDelayMs: number | undefined;
  const missing = new Map<string, Digest>();
  for (const any of details) {
    const retry = unpackAny(googleRpc.RetryInfo, any);
    if (retry?.retryDelay) retryDelayMs = Number(retry.retryDelay.seconds) * 1000 + Math.floor(retry.retryDelay.nanos / 1e6);
    const failure = unpackAny(googleRpc.PreconditionFailure, any);
    for (const v of failure?.violations ?? []) {
      if (v.type !== 'MISSING' || !v.subject.startsWith('blobs/')) continue;
      try {
        const digest = parseDigestKey(v.subject.slice('blobs/'.length));
        missing.set(digestKey(digest), digest);
      } catch {
        // a subject that is not a digest names nothing we could upload
      }
    }
  }
  return { ...(retryDelayMs !== undefined ? { retryDelayMs } : {}), missing: [...missing.values()] };
}
