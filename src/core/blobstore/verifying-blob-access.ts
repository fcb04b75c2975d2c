import { digestKey, isEmptyDigest, type Digest } from '../digest/digest.js';
import { DigestHasher, digestOf } from '../digest/sha256.js';
import { InvalidArgumentError, NotFoundError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { bufferRead, resolveRange } from './read-range.js';

export interface VerifyingBlobAccessOptions {
  /**
   * Reads of blobs up to this size are loaded whole, checked, then served from memory (one pass over
   * the data). Larger blobs are checked in a streaming pass first and then streamed again, so memory
   * stays flat. Default 4 MiB.
   */
  readonly wholeReadLimitBytes?: number;
  readonly logger?: BlobAccessLogger;
}

const DEFAULT_WHOLE_READ_LIMIT = 4 * 1024 * 1024;

/**
 * Decorator for a content-addressable store: no blob goes in or comes out unless its size and SHA-256
 * match its digest.
 * - put / beginWrite: a mismatch is INVALID_ARGUMENT and nothing is stored.
 * - get / read: a stored blob that does not match (bit rot, a truncated file, a hand edit) is logged,
 *   deleted from the backend, and reported as NOT_FOUND, so clients upload it again.
 * - The empty blob is always present and never touches the backend.
 */
export class VerifyingBlobAccess implements BlobAccess {
  private readonly wholeReadLimit: number;

  constructor(
    private readonly backend: BlobAccess,
    private readonly options: VerifyingBlobAccessOptions = {},
  ) {
    this.wholeReadLimit = options.wholeReadLimitBytes ?? DEFAULT_WHOLE_READ_LIMIT;
  }

  async get(digest: Digest): Promise<Buffer> {
    if (isEmptyDigest(digest)) return Buffer.alloc(0);
    const data = await this.backend.get(digest);
    if (data.length !== digest.sizeBytes || digestOf(data).hash !== digest.hash) {
      throw await this.dropCorrupt(digest, `${data.length} bytes with a different content`);
    }
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    if (digest.sizeBytes <= this.wholeReadLimit) return bufferRead(await this.get(digest), range);
    // Check the range before reading gigabytes only to reject it.
    resolveRange(digest.sizeBytes, range);
    const check = await this.backend.read(digest);
    const hasher = new DigestHasher();
    for await (const chunk of check.chunks) {
      hasher.update(chunk);
      if (hasher.sizeBytes > digest.sizeBytes) break;
    }
    const actual = hasher.digest();
    if (actual.sizeBytes !== digest.sizeBytes || actual.hash !== digest.hash) {
      throw await this.dropCorrupt(digest, `content does not match (read ${actual.sizeBytes} bytes)`);
    }
    return this.backend.read(digest, range);
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    checkContent(digest, data.length, () => digestOf(data).hash);
    if (isEmptyDigest(digest)) return;
    await this.backend.put(digest, data);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    const inner = isEmptyDigest(digest) ? undefined : await this.backend.beginWrite(digest);
    return new VerifyingBlobWriter(digest, inner);
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const asked = digests.filter((d) => !isEmptyDigest(d));
    return asked.length === 0 ? [] : this.backend.findMissing(asked);
  }

  delete(digest: Digest): Promise<void> {
    return this.backend.delete(digest);
  }

  /** Logs and deletes a corrupt blob; returns the NotFound error to throw. */
  private async dropCorrupt(digest: Digest, what: string): Promise<NotFoundError> {
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
  ) {}

  get writtenBytes(): number {
    return this.hasher.sizeBytes;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.hasher.sizeBytes + chunk.byteLength > this.digest.sizeBytes) {
      await this.abort();
      throw new InvalidArgumentError(
        `blob ${digestKey(this.digest)}: upload exceeds the digest's size of ${this.digest.sizeBytes} bytes`,
      );
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
  }

  async abort(): Promise<void> {
    await this.inner?.abort();
  }
}
