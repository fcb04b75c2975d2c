/**
 * At most `limit` tasks at once; the rest wait in arrival order. Bounds storage operations across all
 * requests, so a few batches of thousands of blobs cannot open more files than the process may.
 */
export class ConcurrencyLimit {
  private running = 0;
  /** A queue read from `head`: Array.shift on tens of thousands of waiters is O(n) each, O(n²) per batch. */
  private waiting: (() => void)[] = [];
  private head = 0;

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.next();
      if (next) next();
      else this.running--;
    }
  }

  private next(): (() => void) | undefined {
    if (this.head === this.waiting.length) return undefined;
    const next = this.waiting[this.head++];
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    return next;
  }
}
