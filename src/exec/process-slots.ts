/**
 * `--jobs` counting semaphore: at most `size` processes at once, granted in request order. Cache
 * checks and input hashing run outside it, so they overlap with the processes that hold slots.
 */
export class ProcessSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private head = 0;

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  /** Resolves with a release function once a slot is free; call it exactly once. */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.head < this.waiting.length) {
        const next = this.waiting[this.head++]!;
        if (this.head === this.waiting.length) {
          // Drained: drop the consumed entries so the queue does not grow without bound.
          this.waiting.length = 0;
          this.head = 0;
        }
        next(); // the slot passes straight to the next waiter
      } else {
        this.free++;
      }
    };
  }
}
