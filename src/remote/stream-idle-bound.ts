import * as grpc from '@grpc/grpc-js';
import { RemoteCallError } from './remote-call-error.js';

/**
 * `--remote_timeout` on a stream (ByteStream Read and Write, Execute, WaitExecution). A whole-call
 * deadline would cut a large download or a long action short, so the bound is between messages: a
 * stream that goes `ms` without one (no message received, or for a Write none accepted by the
 * transport) is cancelled with DEADLINE_EXCEEDED, which the Retrier retries. 0: no bound.
 */
export class StreamIdleBound {
  private timer: NodeJS.Timeout | undefined;
  private expiredError: RemoteCallError | undefined;

  constructor(
    private readonly ms: number,
    /** The call and endpoint, for the error (`ByteStream.Read of ... on grpc://...`). */
    private readonly what: string,
    /** Ends the stream (`call.cancel()`). */
    private readonly cancel: () => void,
  ) {
    this.touch();
  }

  /** The stream made progress: the bound starts again. */
  touch(): void {
    if (this.ms <= 0 || this.expiredError) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.expiredError = new RemoteCallError(
        `${this.what}: DEADLINE_EXCEEDED: nothing received for ${this.ms} ms (--remote_timeout bounds the wait between two messages of a stream)`,
        grpc.status.DEADLINE_EXCEEDED,
      );
      this.cancel();
    }, this.ms);
  }

  /** The error to report when the bound ended the stream (its cancellation shows as CANCELLED), else undefined. */
  get expired(): RemoteCallError | undefined {
    return this.expiredError;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
