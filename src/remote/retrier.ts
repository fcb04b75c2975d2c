import * as grpc from '@grpc/grpc-js';
import { isRemoteCallError, RemoteCallError } from './remote-call-error.js';

/**
 * Bazel's remote retry policy: `--remote_retries` attempts after the first, exponential backoff
 * with jitter, no wait longer than `--remote_retry_max_delay`.
 */
export interface BackoffPolicy {
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  /** `--remote_retry_max_delay`: caps every wait, the server's RetryInfo delay included. */
  readonly maxDelayMs: number;
  readonly multiplier: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2, jitter: 0.1 };

/**
 * Codes a retry may cure: the server is restarting or overloaded, a transaction was aborted, or a
 * call (or a stream's idle bound, see StreamIdleBound) ran out of `--remote_timeout`, as Bazel's
 * RemoteRetrier counts them.
 */
const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.RESOURCE_EXHAUSTED, grpc.status.ABORTED, grpc.status.DEADLINE_EXCEEDED]);

export function isRetryable(e: unknown): boolean {
  return isRemoteCallError(e) && RETRYABLE.has(e.code);
}

/**
 * Runs a call again after a retryable failure, waiting longer each time (and at least the server's
 * RetryInfo delay, both capped by `maxDelayMs`). So one call, with each attempt bounded by
 * `--remote_timeout`, ends within (retries + 1) x remote_timeout + retries x max_delay, whatever
 * the server says. Sleep and randomness are injected so tests control time.
 */
export class Retrier {
  constructor(
    readonly policy: BackoffPolicy = DEFAULT_BACKOFF,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * `progress`, when given, says whether the failed attempt got somewhere (a stream delivered a
   * message): then the next attempt follows at once, uncounted, and the backoff starts over, as
   * Bazel's ProgressiveBackoff does for WaitExecution.
   */
  async run<T>(call: () => Promise<T>, retryable: (e: unknown) => boolean = isRetryable, progress?: () => boolean): Promise<T> {
    let retries = 0;
    for (;;) {
      try {
        return await call();
      } catch (e) {
        if (!retryable(e)) throw retries > 0 ? gaveUp(e, retries) : e;
        if (progress?.()) {
          retries = 0; // at once, and uncounted: Bazel's ProgressiveBackoff after a reset
          continue;
        }
        if (retries >= this.policy.maxRetries) throw retries > 0 ? gaveUp(e, retries) : e;
        await this.sleep(this.delayMs(retries++, isRemoteCallError(e) ? e.retryDelayMs : undefined));
      }
    }
  }

  /** The wait before retry number `attempt + 1`: backoff or the server's delay, whichever is longer, never above `maxDelayMs`. */
  delayMs(attempt: number, serverDelayMs?: number): number {
    const p = this.policy;
    const base = Math.min(p.maxDelayMs, p.initialDelayMs * p.multiplier ** attempt);
    const jittered = base * (1 - p.jitter + 2 * p.jitter * this.random());
    return Math.min(p.maxDelayMs, Math.max(jittered, serverDelayMs ?? 0));
  }
}

/** The last failure, saying how many retries came before it (its code kept). */
function gaveUp(e: unknown, retries: number): unknown {
  if (!isRemoteCallError(e)) return e;
  return new RemoteCallError(`${e.message} (gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'})`, e.code, e.retryDelayMs, e.missingBlobs, {
    cause: e,
  });
}
