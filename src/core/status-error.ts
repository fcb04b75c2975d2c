import { KilnError } from './errors.js';
import { googleRpc } from './proto.js';

/**
 * An error that carries the gRPC status code a server must answer with. Storage and protocol code
 * throws these; the gRPC layer maps `code` 1:1 onto the call's status (see `grpcStatusOf`), so a
 * NOT_FOUND deep in a store reaches the client as NOT_FOUND, never as UNKNOWN.
 */
export abstract class StatusError extends KilnError {
  abstract readonly code: googleRpc.Code;

  /**
   * A new error of the same class and fields whose message starts with `context: ` (e.g. the RPC field
   * concerned), with this one as its `cause`. This error is left as it is: one failure can be shared by
   * several requests (a de-duplicated action, a cached rejection), and each adds its own context.
   */
  withContext(context: string): this {
    const copy = Object.create(Object.getPrototypeOf(this) as object) as this;
    Object.defineProperties(copy, Object.getOwnPropertyDescriptors(this));
    Object.defineProperty(copy, 'message', { value: `${context}: ${this.message}`, writable: true, configurable: true });
    Object.defineProperty(copy, 'cause', { value: this, writable: true, configurable: true });
    return copy;
  }
}

/** The request is malformed: a bad digest, a size or hash mismatch, a bad resource name. Nothing was stored. */
export class InvalidArgumentError extends StatusError {
  readonly code = googleRpc.Code.INVALID_ARGUMENT;
}

/** The blob or action result is not stored (or was dropped as corrupt). */
export class NotFoundError extends StatusError {
  readonly code = googleRpc.Code.NOT_FOUND;
}

/** Out of space or over a configured limit; `retryAfterMs` feeds RetryInfo when retrying may help. */
export class ResourceExhaustedError extends StatusError {
  readonly code = googleRpc.Code.RESOURCE_EXHAUSTED;
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** One PreconditionFailure violation, e.g. `{ type: 'MISSING', subject: 'blobs/<hash>/<size>' }`. */
export interface PreconditionViolation {
  type: string;
  subject: string;
  description: string;
}

/** The request is well formed but the system is not in a state to serve it, e.g. referenced blobs are missing. */
export class FailedPreconditionError extends StatusError {
  readonly code = googleRpc.Code.FAILED_PRECONDITION;
  constructor(
    message: string,
    readonly violations: readonly PreconditionViolation[] = [],
  ) {
    super(message);
  }
}

/** A read beyond the end of a blob (ByteStream read_offset > size). */
export class OutOfRangeError extends StatusError {
  readonly code = googleRpc.Code.OUT_OF_RANGE;
}

/** A backend cannot be reached right now; retrying later may succeed. */
export class UnavailableError extends StatusError {
  readonly code = googleRpc.Code.UNAVAILABLE;
}

/** A bug or an unexpected failure of the machine (I/O error other than a missing file). */
export class InternalError extends StatusError {
  readonly code = googleRpc.Code.INTERNAL;
}

/**
 * A status another server answered with, passed on with its code, for codes without a class of their
 * own (DATA_LOSS, DEADLINE_EXCEEDED, ABORTED, CANCELLED, ...): a storage node's answer relayed by the
 * server in front of it.
 */
export class PassedOnStatusError extends StatusError {
  constructor(
    message: string,
    readonly code: googleRpc.Code,
  ) {
    super(message);
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

/**
 * The gRPC status for any thrown value: a StatusError keeps its code and message; anything else is
 * INTERNAL (it is a bug or an I/O failure, not the client's fault) with its message, never UNKNOWN.
 */
export function grpcStatusOf(e: unknown): { code: googleRpc.Code; message: string } {
  if (e instanceof StatusError) return { code: e.code, message: e.message };
  return { code: googleRpc.Code.INTERNAL, message: e instanceof Error ? e.message : String(e) };
}
