import { digestKey, type Digest } from '../core/index.js';

/** Reads one batch of blobs: each digest key to its checked bytes or to its own error. */
export type BatchReader = (digests: Digest[]) => Promise<Map<string, Buffer | Error>>;

interface Queued {
  readonly digest: Digest;
  readonly waiters: { resolve(data: Buffer): void; reject(e: Error): void }[];
}

/**
 * Coalesces the small-blob reads of many callers (the outputs of many cache hits) into few batch
 * requests. A read joins the queue; the queue is sent once the event loop has gathered what the
 * current callbacks asked for (setImmediate), in batches of at most `maxBatchBytes`, with at most
 * `maxBatches` requests in flight: while they are busy, reads accumulate into the next, larger
 * batch. Concurrent reads of one digest share one entry.
 */
export class BlobReadBatcher {
  /** Insertion order is request order. */
  private readonly queue = new Map<string, Queued>();
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly readBatch: BatchReader,
    /** What a blob costs of a batch (its bytes and its entry). */
    private readonly cost: (digest: Digest) => number,
    private readonly maxBatchBytes: number,
    private readonly maxBatches: number,
  ) {}

  read(digest: Digest): Promise<Buffer> {
    const key = digestKey(digest);
    return new Promise((resolve, reject) => {
      const queued = this.queue.get(key);
      if (queued) queued.waiters.push({ resolve, reject });
      else this.queue.set(key, { digest, waiters: [{ resolve, reject }] });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  /** Sends batches from the front of the queue while fewer than `maxBatches` are in flight. */
  private send(): void {
    while (this.inFlight < this.maxBatches && this.queue.size > 0) {
      const batch: Queued[] = [];
      let bytes = 0;
      for (const [key, queued] of this.queue) {
        const cost = this.cost(queued.digest);
        if (batch.length > 0 && bytes + cost > this.maxBatchBytes) break;
        batch.push(queued);
        bytes += cost;
        this.queue.delete(key);
      }
      this.inFlight++;
      // Through a promise, so that even a reader that throws at once settles every waiter.
      void new Promise<Map<string, Buffer | Error>>((resolve) => resolve(this.readBatch(batch.map((q) => q.digest))))
        .then(
          (answers) => {
            for (const q of batch) {
              const answer = answers.get(digestKey(q.digest)) ?? new Error(`no answer for blob ${digestKey(q.digest)}`);
              for (const w of q.waiters) {
                if (answer instanceof Error) w.reject(answer);
                else w.resolve(answer);
              }
            }
          },
          (e: unknown) => {
            const error = e instanceof Error ? e : new Error(String(e));
            for (const q of batch) for (const w of q.waiters) w.reject(error);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.send();
        });
    }
  }
}
