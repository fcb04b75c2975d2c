import { LRUCache } from 'lru-cache';
import { digestKey, isEmptyDigest, type Digest } from '../digest/digest.js';
import { DigestHasher, digestOf } from '../digest/sha256.js';
import { InvalidArgumentError, NotFoundError } from '../status-error.js';
import { type BlobAccess, type BlobAccessLogger, type BlobRead, type BlobWriter, DEFAULT_CHUNK_SIZE_BYTES, type ReadRange } from './blob-access.js';
import { bufferRead, resolveRange } from './read-range.js';

export interface VerifyingBlobAccessOptions {
  /**
   * Reads of blobs up to this size are loaded whole, checked, then served from memory (one pass over
   * the data). Larger blobs are checked in a streaming pass first and then streamed again, so memory
   * stays flat. Default 4 MiB.
   */
  readonly wholeReadLimitBytes?: number;
  readonly logger?: BlobAccessLogger;
  /** How many blobs are remembered as verified (see findMissing). Default 1,000,000 (about 100 MB). */
  readonly verifiedEntries?: number;
}

const DEFAULT_WHOLE_READ_LIMIT = 4 * 1024 * 1024;
const DEFAULT_VERIFIED_ENTRIES = 1_000_000;
/** Unverified blobs findMissing checks at once. */
const VERIFY_CONCURRENCY = 8;

/**
 * Decorator for a content-addressable store: no blob goes in or comes out unless its size and SHA-256
 * match its digest.
 * - put / beginWrite: a mismatch is INVALID_ARGUMENT and nothing is stored.
 * - get / read: a stored blob that does not match (bit rot, a truncated file, a hand edit) is logged,
 *   deleted from the backend, and reported as NOT_FOUND, so clients upload it again.
 * - findMissing: a blob said present can be read. Blobs this process wrote or read and checked are
 *   remembered as verified (a bounded set; one that falls out is checked again); any other blob the
 *   backend holds (stored before a restart, so possibly rotted since) is read and checked first, and a
 *   corrupt one is deleted and reported missing. A read that finds a blob corrupt forgets it.
 * - The empty blob is always present and never touches the backend.
 */
export class VerifyingBlobAccess implements BlobAccess {
  private readonly wholeReadLimit: number;
  private readonly verified: LRUCache<string, true>;

  constructor(
    private readonly backend: BlobAccess,
    private readonly options: VerifyingBlobAccessOptions = {},
  ) {
    this.wholeReadLimit = options.wholeReadLimitBytes ?? DEFAULT_WHOLE_READ_LIMIT;
    this.verified = new LRUCache({ max: options.verifiedEntries ?? DEFAULT_VERIFIED_ENTRIES });
  }

  async get(digest: Digest): Promise<Buffer> {
    if (isEmptyDigest(digest)) return Buffer.alloc(0);
    const data = await this.backend.get(digest);
    if (data.length !== digest.sizeBytes || digestOf(data).hash !== digest.hash) {
      throw await this.dropCorrupt(digest, `${data.length} bytes with a different content`);
    }
    this.verified.set(digestKey(digest), true);
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    if (digest.sizeBytes <= this.wholeReadLimit) return bufferRead(await this.get(digest), range);
    // Check the range before reading gigabytes only to reject it.
    resolveRange(digest.sizeBytes, range);
    await this.verifyStored(digest);
    return this.backend.read(digest, range);
  }

  /** Streams the stored blob through the hash: remembered as verified, or deleted (NOT_FOUND) when corrupt. */
  private async verifyStored(digest: Digest): Promise<void> {
    // Each chunk is hashed before the next is read: one buffer serves the whole pass.
    const check = await this.backend.read(digest, { scratch: Buffer.allocUnsafe(Math.min(digest.sizeBytes, DEFAULT_CHUNK_SIZE_BYTES)) });
    const hasher = new DigestHasher();
    for await (const chunk of check.chunks) {
      hasher.update(chunk);
      if (hasher.sizeBytes > digest.sizeBytes) break;
    }
    const actual = hasher.digest();
    if (actual.sizeBytes !== digest.sizeBytes || actual.hash !== digest.hash) {
      throw await this.dropCorrupt(digest, `content does not match (read ${actual.sizeBytes} bytes)`);
    }
    this.verified.set(digestKey(digest), true);
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    checkContent(digest, data.length, () => digestOf(data).hash);
    if (isEmptyDigest(digest)) return;
    await this.backend.put(digest, data);
    this.verified.set(digestKey(digest), true);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    const inner = isEmptyDigest(digest) ? undefined : await this.backend.beginWrite(digest);
    return new VerifyingBlobWriter(digest, inner, () => this.verified.set(digestKey(digest), true));
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const asked = digests.filter((d) => !isEmptyDigest(d));
    if (asked.length === 0) return [];
    const missing = await this.backend.findMissing(asked);
    const absent = new Set(missing.map(digestKey));
    const unverified = asked.filter((d) => !absent.has(digestKey(d)) && !this.verified.has(digestKey(d)));
    for (let i = 0; i < unverified.length; i += VERIFY_CONCURRENCY) {
      const checks = unverified.slice(i, i + VERIFY_CONCURRENCY).map(async (d) => {
        try {
          await this.verifyStored(d);
        } catch (e) {
          if (!(e instanceof NotFoundError)) throw e;
          missing.push(d); // corrupt (now deleted), or gone since the backend answered
        }
      });
      await Promise.all(checks);
    }
    return missing;
  }

  delete(digest: Digest): Promise<void> {
    this.verified.delete(digestKey(digest));
    return this.backend.delete(digest);
  }

  /** Logs and deletes a corrupt blob; returns the NotFound error to throw. */
  private async dropCorrupt(digest: Digest, what: string): Promise<NotFoundError> {
    this.verified.delete(digestKey(digest));
    this.options.logger?.warn(`blob ${digestKey(digest)} is corrupt in storage (${what}); deleting it`);
    try {
      await this.backend.delete(digest);
    } catch (e) {
      this.options.logger?.warn(`could not delete corrupt blob ${digestKey(digest)}: ${(e as Error).message}`);
    }
    return new NotFoundError(`blob ${digestKey(digest)} not found (the stored copy was corrupt and has been removed)`);
  }
}

/** @throws InvalidArgumentError when size or hash differ from the digest. `hash` is computed only when the size matches. */
function checkContent(digest: Digest, size: number, hash: () => string): void {
  if (size !== digest.sizeBytes) {
    throw new InvalidArgumentError(`blob ${digestKey(digest)}: received ${size} bytes, but the digest says ${digest.sizeBytes}`);
  }
  const actual = hash();
  if (actual !== digest.hash) {
    throw new InvalidArgumentError(`blob ${digestKey(digest)}: content has SHA-256 ${actual}, not the digest's hash`);
  }
}

/** Hashes an upload as it passes and commits only a blob that matches its digest. */
class VerifyingBlobWriter implements BlobWriter {
  private readonly hasher = new DigestHasher();

  constructor(
    private readonly digest: Digest,
    private readonly inner: BlobWriter | undefined,
    private readonly committed: () => void,
  ) {}

  get writtenBytes(): number {
    return this.hasher.sizeBytes;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.hasher.sizeBytes + chunk.byteLength > this.digest.sizeBytes) {
      await this.abort();
      throw new InvalidArgumentError(`blob ${digestKey(this.digest)}: upload exceeds the digest's size of ${this.digest.sizeBytes} bytes`);
    }
    this.hasher.update(chunk);
    await this.inner?.write(chunk);
  }

  async commit(): Promise<void> {
    const size = this.hasher.sizeBytes;
    try {
      checkContent(this.digest, size, () => this.hasher.digest().hash);
    } catch (e) {
      await this.abort();
      throw e;
    }
    await this.inner?.commit();
    this.committed();
  }

  async abort(): Promise<void> {
    await this.inner?.abort();
  }
}
