import { LRUCache } from 'lru-cache';
import { digestKey, type Digest } from '../digest/digest.js';
import { NotFoundError, ResourceExhaustedError } from '../status-error.js';
import type { BlobAccess, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { BufferedBlobWriter } from './buffered-blob-writer.js';
import { bufferRead } from './read-range.js';

/** Bookkeeping cost charged per entry on top of its bytes, so many tiny blobs cannot grow without bound. */
const ENTRY_OVERHEAD_BYTES = 128;

export interface MemoryBlobAccessOptions {
  /** Budget for blob bytes plus a small per-entry overhead; least recently used blobs go first. */
  readonly maxBytes: number;
  /** Hears of each blob dropped to stay within the budget, with the bytes it was charged (metrics). */
  readonly onEvict?: (blobs: number, bytes: number) => void;
}

/** Blobs in process memory, evicted least-recently-used by bytes. Keys are `hash/size`. */
export class MemoryBlobAccess implements BlobAccess {
  private readonly cache: LRUCache<string, Buffer>;

  constructor(private readonly options: MemoryBlobAccessOptions) {
    this.cache = new LRUCache<string, Buffer>({
      maxSize: options.maxBytes,
      sizeCalculation: (data) => data.length + ENTRY_OVERHEAD_BYTES,
      ...(options.onEvict
        ? { dispose: (data: Buffer, _key: string, reason: string) => reason === 'evict' && options.onEvict?.(1, data.length + ENTRY_OVERHEAD_BYTES) }
        : {}),
    });
  }

  /** Blob count and charged bytes, for tests and metrics. */
  get usage(): { blobs: number; bytes: number } {
    return { blobs: this.cache.size, bytes: this.cache.calculatedSize };
  }

  async get(digest: Digest): Promise<Buffer> {
    const data = this.cache.get(digestKey(digest));
    if (data === undefined) throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return bufferRead(await this.get(digest), range);
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    if (data.length + ENTRY_OVERHEAD_BYTES > this.options.maxBytes) this.tooLarge(digest, data.length);
    // A view into a larger buffer (a decoded gRPC message) would pin all of it: keep an exact copy.
    const owned = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : Buffer.from(data);
    this.cache.set(digestKey(digest), owned);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    const limit = this.options.maxBytes - ENTRY_OVERHEAD_BYTES;
    if (digest.sizeBytes > limit) this.tooLarge(digest, digest.sizeBytes);
    return new BufferedBlobWriter((data) => this.put(digest, data), limit);
  }

  private tooLarge(digest: Digest, size: number): never {
    throw new ResourceExhaustedError(`blob ${digestKey(digest)} (${size} bytes) exceeds the memory store's budget of ${this.options.maxBytes} bytes`);
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    // get() rather than has(): asking about a blob counts as using it.
    return digests.filter((d) => this.cache.get(digestKey(d)) === undefined);
  }

  async delete(digest: Digest): Promise<void> {
    this.cache.delete(digestKey(digest));
  }
}
