import { ResourceExhaustedError } from '../src/core/index.js';

interface InFlightLimits {
  /** Requests (streams included) served at once; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxConcurrentRequests: number;
  /** Blob bytes held by requests at once (batch payloads, stream chunks being processed). */
  readonly maxInFlightBytes: number;
  /** The retry delay suggested to refused clients (google.rpc.RetryInfo). */
  readonly retryAfterMs: number;
}

/** What a request holds while it runs; give it back with `release()` exactly once. */
export interface Admission {
  /** Changes the bytes this request holds (a stream's current chunk). Refuses growth beyond the limit. */
  resize(bytes: number): void;
  release(): void;
}

/**
 * Admission control: bounds the requests and the blob bytes in flight, so an overloaded server answers
 * RESOURCE_EXHAUSTED with a retry hint instead of running out of memory. A request larger than the
 * byte budget is still admitted when nothing else holds bytes, so it is never refused forever.
 */
export class InFlightLimiter {
  private requests = 0;
  private bytes = 0;

  constructor(private readonly limits: InFlightLimits) {}

  /** Current load, for logs and tests. */
  get load(): { requests: number; bytes: number } {
    return { requests: this.requests, bytes: this.bytes };
  }

  /** @throws ResourceExhaustedError (with retryAfterMs) when the request would exceed a limit. */
  admit(what: string, bytes = 0): Admission {
    if (this.requests >= this.limits.maxConcurrentRequests) {
      throw this.refusal(`${what}: server is busy (${this.requests} requests in flight, limit ${this.limits.maxConcurrentRequests})`);
    }
    this.checkBytes(what, bytes, 0);
    this.requests++;
    this.bytes += bytes;
    let held = bytes;
    let released = false;
    return {
      resize: (next: number) => {
        if (released) return;
        if (next > held) this.checkBytes(what, next - held, held);
        this.bytes += next - held;
        held = next;
      },
      release: () => {
        if (released) return;
        released = true;
        this.requests--;
        this.bytes -= held;
      },
    };
  }

  private checkBytes(what: string, extra: number, alreadyHeld: number): void {
    const othersHold = this.bytes - alreadyHeld;
    if (extra > 0 && othersHold > 0 && this.bytes + extra > this.limits.maxInFlightBytes) {
      throw this.refusal(`${what}: server is busy (${this.bytes} bytes in flight, ${extra} more requested, limit ${this.limits.maxInFlightBytes})`);
    }
  }

  private refusal(message: string): ResourceExhaustedError {
    return new ResourceExhaustedError(message, this.limits.retryAfterMs);
  }
}
