import * as grpc from '@grpc/grpc-js';
import { type longrunning, reapi, unpackAny, type Digest } from '../core/index.js';
import { RemoteCallError, remoteCallError, rpcStatusError } from './remote-call-error.js';
import type { RemoteChannel } from './remote-channel.js';
import { isRetryable, type Retrier } from './retrier.js';
import { StreamIdleBound } from './stream-idle-bound.js';

export interface ExecuteOptions {
  readonly skipCacheLookup: boolean;
  /** Called when the server lacks blobs the action needs (FAILED_PRECONDITION): upload them, then Execute is sent again. */
  readonly reupload: (missing: readonly Digest[]) => Promise<void>;
  /** Aborting cancels the call (the server may cancel the execution). */
  readonly signal?: AbortSignal;
}

/** The finished execution: the response and the operation's name (for --verbose_failures). */
export interface ExecutionOutcome {
  readonly response: reapi.ExecuteResponse;
  readonly operationName: string;
}

/**
 * Execute with the operation stream. A stream that breaks (the server restarted, a proxy cut it)
 * or stays silent for `timeoutMs` (`--remote_timeout`, an idle bound between two operation
 * messages) continues with WaitExecution on the operation's name; when the server no longer knows
 * it (NOT_FOUND), the action is executed again. A finished operation that failed with a retryable
 * status is executed again too. A FAILED_PRECONDITION naming missing blobs (the server lost them)
 * re-uploads them and executes again. UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED and DEADLINE_EXCEEDED
 * back off and retry, as the Retrier says; a stream that delivered an operation before it broke
 * starts the backoff of the WaitExecution that follows over (as Bazel's does: an action may run
 * for long, and a server that keeps sending operations is working on it), while Execute calls stay
 * bounded by `--remote_retries`.
 */
export async function executeRemotely(
  channel: RemoteChannel,
  instanceName: string,
  actionDigest: Digest,
  options: ExecuteOptions,
  metadata: grpc.Metadata,
  retrier: Retrier,
  timeoutMs: number,
): Promise<ExecutionOutcome> {
  const where = channel.endpoint.url;
  let operationName: string | undefined;
  let reuploads = 0;
  let reexecutions = 0;
  /** Whether the attempt that just failed received an operation (see the Retrier's `progress`). */
  let delivered = false;
  return retrier.run(
    async () => {
      for (;;) {
        try {
          const what = operationName ? `WaitExecution of ${operationName} on ${where}` : `Execute on ${where}`;
          const stream = operationName
            ? channel.execution.WaitExecution({ name: operationName }, metadata)
            : channel.execution.Execute({ instanceName, actionDigest, skipCacheLookup: options.skipCacheLookup }, metadata);
          const done = await lastOperation(stream, options.signal, new StreamIdleBound(timeoutMs, what, () => stream.cancel()), (name) => {
            operationName = name;
            delivered = true;
          });
          if (!done) throw new RemoteCallError(`${what}: the operation stream ended before the operation was done`, grpc.status.UNAVAILABLE);
          // A finished operation is not waited for again: a retry executes anew.
          operationName = undefined;
          const response = responseOf(done, where);
          const status = response.status;
          if (status && status.code !== 0) {
            const error = rpcStatusError(status, `executing the action on ${where} (operation ${done.name})`);
            if (error.code === grpc.status.FAILED_PRECONDITION && error.missingBlobs.length > 0) throw error;
            // A non-OK status with a result (DEADLINE_EXCEEDED with the partial output) goes to the caller,
            // and so does the server's timeout without one: the action's own timeout is its result.
            if (!response.result && error.code !== grpc.status.DEADLINE_EXCEEDED) throw error;
          }
          return { response, operationName: done.name };
        } catch (e) {
          const error = remoteCallError(e, `Execute on ${where}`);
          if (error.code === grpc.status.NOT_FOUND && operationName && reexecutions++ < retrier.policy.maxRetries) {
            operationName = undefined; // the server forgot the operation (restarted): execute again
            continue;
          }
          if (error.code === grpc.status.FAILED_PRECONDITION && error.missingBlobs.length > 0 && reuploads++ < 3) {
            operationName = undefined;
            await options.reupload(error.missingBlobs);
            continue;
          }
          throw error;
        }
      }
    },
    // A server that shuts down cancels its streams: unless we cancelled, that is a broken stream too.
    (e) => !options.signal?.aborted && (isRetryable(e) || (e instanceof RemoteCallError && e.code === grpc.status.CANCELLED)),
    // Progress: an operation came before the stream broke, and the next attempt waits on it.
    () => {
      const progressed = delivered && operationName !== undefined;
      delivered = false;
      return progressed;
    },
  );
}

/** The stream's last operation when it is done (undefined when the stream ended before); `idle` bounds the silence between messages. */
function lastOperation(
  stream: grpc.ClientReadableStream<longrunning.Operation>,
  signal: AbortSignal | undefined,
  idle: StreamIdleBound,
  received: (name: string) => void,
): Promise<longrunning.Operation | undefined> {
  return new Promise((resolve, reject) => {
    let last: longrunning.Operation | undefined;
    const onAbort = () => stream.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = () => {
      idle.stop();
      signal?.removeEventListener('abort', onAbort);
    };
    stream.on('data', (op: longrunning.Operation) => {
      idle.touch();
      if (op.name) received(op.name);
      last = op;
    });
    stream.on('error', (e) => {
      finish();
      reject(idle.expired ?? e);
    });
    stream.on('end', () => {
      finish();
      resolve(last?.done ? last : undefined);
    });
  });
}

function responseOf(op: longrunning.Operation, where: string): reapi.ExecuteResponse {
  if (op.error) throw rpcStatusError(op.error, `executing the action on ${where} (operation ${op.name})`);
  const response = op.response ? unpackAny(reapi.ExecuteResponse, op.response) : undefined;
  if (!response) throw new RemoteCallError(`Execute on ${where}: operation ${op.name} is done without an ExecuteResponse`, grpc.status.INTERNAL);
  return response;
}
