import type { Clock } from '../clock.js';
import type { Digest } from '../digest/digest.js';

/**
 * Blobs a bounded store must not evict for a while: those a client was told exist (FindMissingBlobs
 * said present, GetActionResult named them as outputs), which it may then rely on without reading
 * them (`--remote_download_minimal`), and the inputs of the actions it goes on to execute. A pin has a
 * lifetime instead of an owner: nothing can forget to unpin, and a build that outlives the lifetime
 * asks again (FindMissingBlobs renews the pin). Pinning the same blob again extends its pin.
 */
export class BlobPins {
  /** Hash to the time its pin ends. */
  private readonly until = new Map<string, number>();
  private pinsSinceSweep = 0;

  constructor(
    private readonly clock: Clock,
    /** How long a pin lasts: a build's lifetime. */
    readonly ttlMs: number,
  ) {}

  pin(digests: Iterable<Digest>): void {
    const end = this.clock.now() + this.ttlMs;
    for (const d of digests) {
      if (d.sizeBytes === 0) continue;
      this.until.set(d.hash, end);
      this.pinsSinceSweep++;
    }
    // Expired pins are dropped now and then, so the map stays the size of what is pinned.
    if (this.pinsSinceSweep > 10_000 && this.pinsSinceSweep > this.until.size) this.sweep();
  }

  isPinned(hash: string): boolean {
    const end = this.until.get(hash);
    if (end === undefined) return false;
    if (end > this.clock.now()) return true;
    this.until.delete(hash);
    return false;
  }

  /** Pins in force, for tests and logs. */
  get size(): number {
    this.sweep();
    return this.until.size;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [hash, end] of this.until) if (end <= now) this.until.delete(hash);
    this.pinsSinceSweep = 0;
  }
}
