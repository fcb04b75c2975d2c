import * as grpc from '@grpc/grpc-js';
import { durationFromMs, FailedPreconditionError, googleRpc, grpcStatusOf, packAny, ResourceExhaustedError, isStatusError } from '../src/core/index.js';

/** The trailer in which gRPC carries a serialized google.rpc.Status with typed details. */
const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/**
 * Longest status message sent. A message travels in the HTTP/2 trailers (percent-encoded, up to three
 * times its length); one over the client's header limit never arrives, and the client then waits for
 * its deadline (and a grpc-js connection can be left unusable). Messages may quote what a client sent.
 */
const MAX_STATUS_MESSAGE_CHARS = 1024;

/** `message` cut to MAX_STATUS_MESSAGE_CHARS, saying how long it was. */
export function boundedStatusMessage(message: string): string {
  if (message.length <= MAX_STATUS_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_STATUS_MESSAGE_CHARS - 40)}... (message cut, ${message.length} characters)`;
}

/**
 * The gRPC status a thrown value is answered with. A StatusError keeps its code and message (never
 * UNKNOWN); anything else is INTERNAL. RESOURCE_EXHAUSTED carries google.rpc.RetryInfo and
 * FAILED_PRECONDITION its google.rpc.PreconditionFailure, in `grpc-status-details-bin`.
 */
export function toServiceError(e: unknown): Partial<grpc.StatusObject> {
  const { code } = grpcStatusOf(e);
  const message = boundedStatusMessage(grpcStatusOf(e).message);
  const details = statusDetails(e);
  const metadata = new grpc.Metadata();
  if (details.length > 0) {
    metadata.set(STATUS_DETAILS_KEY, googleRpc.Status.encode({ code, message, details }));
  }
  return { code: code as number as grpc.status, details: message, metadata };
}

/** The google.rpc.Status of a per-item result (BatchUpdateBlobs / BatchReadBlobs responses). */
export function toRpcStatus(e: unknown): googleRpc.StatusInit {
  const { code, message } = grpcStatusOf(e);
  return { code, message: boundedStatusMessage(message), details: statusDetails(e) };
}

function statusDetails(e: unknown): { typeUrl: string; value: Buffer }[] {
  if (e instanceof ResourceExhaustedError) {
    const ms = e.retryAfterMs ?? 1000;
    return [
      packAny(googleRpc.RetryInfo, {
        retryDelay: durationFromMs(ms),
      }),
    ];
  }
  if (e instanceof FailedPreconditionError && e.violations.length > 0) {
    return [packAny(googleRpc.PreconditionFailure, { violations: e.violations.map((v) => ({ ...v })) })];
  }
  return [];
}

/** A StatusError with `context: ` (the RPC and field) before its message (a new error; `e` is left as it is); other values as they are. */
export function withContext(e: unknown, context: string): unknown {
  return isStatusError(e) ? e.withContext(context) : e;
}
