import { createHash } from 'node:crypto';
import { digestKey, type Digest } from '../digest/digest.js';
import { NotFoundError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { BufferedBlobWriter } from './buffered-blob-writer.js';
import { bufferRead } from './read-range.js';

/** `KAC1` then the SHA-256 of the content: 36 bytes after each stored value. */
const MAGIC = Buffer.from('KAC1', 'ascii');
const TRAILER_BYTES = MAGIC.length + 32;

export interface ChecksummingBlobAccessOptions {
  readonly logger?: BlobAccessLogger;
}

/**
 * Decorator for keyspaces whose keys say nothing about the content (the action cache): each value is
 * stored with a trailer holding its SHA-256, and a value whose bytes no longer match it (a flipped
 * bit on disk, a truncated or hand-edited file, a file of another format) is dropped and reported
 * as a miss, never served. The CAS needs no such thing: its key is the content's own digest
 * (see verifying-blob-access.ts). The block store checksums its entries itself.
 *
 * The stored form is private to the backend under it, so it is used for the servers' disk storage,
 * not for the client's `--disk_cache`, whose files keep Bazel's layout (a bare ActionResult).
 */
export class ChecksummingBlobAccess implements BlobAccess {
  constructor(
    private readonly backend: BlobAccess,
    private readonly options: ChecksummingBlobAccessOptions = {},
  ) {}

  async get(digest: Digest): Promise<Buffer> {
    const stored = await this.backend.get(digest);
    const content = contentOf(stored);
    if (content === undefined) {
      this.options.logger?.warn(`action cache entry ${digestKey(digest)} fails its checksum; dropped`);
      await this.backend.delete(digest);
      throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    }
    return content;
  }

  /** Values are small (ActionResults): read whole, checked, then sliced. */
  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return bufferRead(await this.get(digest), range);
  }

  put(digest: Digest, data: Buffer): Promise<void> {
    return this.backend.put(digest, withTrailer(data));
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    return new BufferedBlobWriter((data) => this.put(digest, data));
  }

  findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    return this.backend.findMissing(digests);
  }

  delete(digest: Digest): Promise<void> {
    return this.backend.delete(digest);
  }
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

function withTrailer(content: Buffer): Buffer {
  return Buffer.concat([content, MAGIC, sha256(content)]);
}

/** The content of a stored value, or undefined when its trailer is missing or does not match. */
function contentOf(stored: Buffer): Buffer | undefined {
  if (stored.length < TRAILER_BYTES) return undefined;
  const at = stored.length - TRAILER_BYTES;
  if (!stored.subarray(at, at + MAGIC.length).equals(MAGIC)) return undefined;
  const content = stored.subarray(0, at);
  return sha256(content).equals(stored.subarray(at + MAGIC.length)) ? content : undefined;
}
