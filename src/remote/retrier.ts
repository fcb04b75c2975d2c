import * as grpc from '@grpc/grpc-js';
import { isRemoteCallError } from './remote-call-error.js';

/** Bazel's remote retry policy: `--remote_retries` attempts after the first, exponential backoff with jitter. */
export interface BackoffPolicy {
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2, jitter: 0.1 };

/** Codes a retry may cure: the server is restarting or overloaded, or a transaction was aborted. */
const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.RESOURCE_EXHAUSTED, grpc.status.ABORTED]);

export function isRetryable(e: unknown): boolean {
  return isRemoteCallError(e) && RETRYABLE.has(e.code);
}

/**
 * Runs a call again after a retryable failure, waiting longer each time (and at least the server's
 * RetryInfo delay for RESOURCE_EXHAUSTED). Sleep and randomness are injected so tests control time.
 */
export class Retrier {
  constructor(
    readonly policy: BackoffPolicy = DEFAULT_BACKOFF,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly random: () => number = Math.random,
  ) {}

  async run<T>(call: () => Promise<T>, retryable: (e: unknown) => boolean = isRetryable): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        if (attempt >= this.policy.maxRetries || !retryable(e)) throw e;
        await this.sleep(this.delayMs(attempt, isRemoteCallError(e) ? e.retryDelayMs : undefined));
      }
    }
  }

  /** The wait before retry number `attempt + 1`. */
  delayMs(attempt: number, serverDelayMs?: number): number {
    const p = this.policy;
    const base = Math.min(p.maxDelayMs, p.initialDelayMs * p.multiplier ** attempt);
    const jittered = base * (1 - p.jitter + 2 * p.jitter * this.random());
    return Math.max(jittered, serverDelayMs ?? 0);
  }
}
