import type { Clock } from '../clock.js';
import { digestKey, type Digest } from '../digest/digest.js';
import { NotFoundError } from '../status-error.js';
import type { BlobAccess, BlobRead, BlobWriter, ReadRange } from './blob-access.js';

export interface ExistenceCachingBlobAccessOptions {
  /** How long a "present" answer is trusted without asking the backend again. */
  readonly ttlMs: number;
  /** Most digests remembered; the oldest are dropped first. Default 1,000,000. */
  readonly maxEntries?: number;
  readonly clock: Clock;
}

/**
 * Decorator that remembers which digests findMissing found present, for a TTL, and answers repeated
 * questions about them without asking the backend (Buildbarn's ExistenceCachingBlobAccess). Only
 * positive answers are cached: a missing blob is asked about every time, so an upload shows at once.
 * A get/read that finds a blob gone, and a delete, forget the digest immediately.
 */
export class ExistenceCachingBlobAccess implements BlobAccess {
  /** Digest key to the time its "present" answer expires; insertion order is age order. */
  private readonly presentUntil = new Map<string, number>();
  private readonly maxEntries: number;

  constructor(
    private readonly backend: BlobAccess,
    private readonly options: ExistenceCachingBlobAccessOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 1_000_000;
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const now = this.options.clock.now();
    const unknown = digests.filter((d) => {
      const key = digestKey(d);
      const until = this.presentUntil.get(key);
      if (until === undefined) return true;
      if (until > now) return false;
      this.presentUntil.delete(key);
      return true;
    });
    if (unknown.length === 0) return [];
    const missing = await this.backend.findMissing(unknown);
    const missingKeys = new Set(missing.map(digestKey));
    const expires = this.options.clock.now() + this.options.ttlMs;
    for (const d of unknown) {
      const key = digestKey(d);
      if (!missingKeys.has(key)) this.remember(key, expires);
    }
    return missing;
  }

  get(digest: Digest): Promise<Buffer> {
    return this.forgettingIfGone(digest, this.backend.get(digest));
  }

  read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return this.forgettingIfGone(digest, this.backend.read(digest, range));
  }

  put(digest: Digest, data: Buffer): Promise<void> {
    return this.backend.put(digest, data);
  }

  beginWrite(digest: Digest): Promise<BlobWriter> {
    return this.backend.beginWrite(digest);
  }

  async delete(digest: Digest): Promise<void> {
    this.presentUntil.delete(digestKey(digest));
    await this.backend.delete(digest);
  }

  private remember(key: string, expires: number): void {
    this.presentUntil.delete(key);
    this.presentUntil.set(key, expires);
    if (this.presentUntil.size > this.maxEntries) {
      const oldest = this.presentUntil.keys().next().value;
      if (oldest !== undefined) this.presentUntil.delete(oldest);
    }
  }

  private async forgettingIfGone<T>(digest: Digest, result: Promise<T>): Promise<T> {
    try {
      return await result;
    } catch (e) {
      if (e instanceof NotFoundError) this.presentUntil.delete(digestKey(digest));
      throw e;
    }
  }
}
