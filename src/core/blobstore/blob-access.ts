import type { Digest } from '../digest/digest.js';

/**
 * Storage addressed by digest, in the style of Buildbarn's BlobAccess. One interface serves both the
 * content-addressable storage (key = digest of the content) and the action cache (key = digest of an
 * Action, value = a serialized ActionResult). Behaviour beyond storing (verification, existence
 * caching, completeness checking) lives in decorators that implement this same interface.
 *
 * Every method that cannot find a blob throws NotFoundError; malformed requests throw
 * InvalidArgumentError; limits throw ResourceExhaustedError (see ../status-error.ts).
 */
export interface BlobAccess {
  /** The whole blob. Callers must not modify the returned buffer (memory stores hand out their copy). */
  get(digest: Digest): Promise<Buffer>;

  /**
   * Part of a blob as a stream of chunks, so large blobs are served without holding them in memory.
   * NotFound and range errors are thrown by this call, before any chunk. Consume `chunks` to the end
   * or stop early with `break`/`return()`: that releases the open file.
   */
  read(digest: Digest, range?: ReadRange): Promise<BlobRead>;

  /** Stores a whole blob. The store may keep a reference to `data`; do not modify it afterwards. */
  put(digest: Digest, data: Buffer): Promise<void>;

  /**
   * Starts a chunked upload. Nothing is visible until `commit()`; `abort()` discards it. A writer may
   * be kept across broken client streams to resume an upload at `writtenBytes`.
   */
  beginWrite(digest: Digest): Promise<BlobWriter>;

  /** The digests of `digests` that are not stored. Present ones count as used (for LRU). */
  findMissing(digests: readonly Digest[]): Promise<Digest[]>;

  /** Removes a blob if present (used to drop corrupt blobs). Never throws NotFound. */
  delete(digest: Digest): Promise<void>;
}

/** A byte range of a blob; ByteStream's `read_offset` and `read_limit`. */
export interface ReadRange {
  /** First byte to return; 0 when absent. Must not exceed the blob size (OUT_OF_RANGE otherwise). */
  readonly offset?: number;
  /** Maximum number of bytes; 0 or absent means to the end (as ByteStream's read_limit). */
  readonly limit?: number;
  /** Largest chunk to yield; 1 MiB when absent. */
  readonly chunkSizeBytes?: number;
  /**
   * A buffer the backend may read the chunks into instead of allocating each (backends that read
   * from files do): every chunk is then a view of it, valid only until the next chunk is asked for.
   * For readers that are done with a chunk before they ask for the next (a hash pass); a reader that
   * keeps chunks must not give one.
   */
  readonly scratch?: Buffer;
}

export interface BlobRead {
  /** Size of the whole blob, whatever the range. */
  readonly sizeBytes: number;
  /** The bytes of the range in order; no chunk is empty. */
  readonly chunks: AsyncIterable<Buffer>;
}

/** An upload in progress. Methods must not be called concurrently with each other. */
export interface BlobWriter {
  /** Bytes accepted so far: the committed offset ByteStream's QueryWriteStatus reports. */
  readonly writtenBytes: number;
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the blob visible. After commit or abort the writer is closed. */
  commit(): Promise<void>;
  /** Discards what was written; safe to call more than once and after commit. */
  abort(): Promise<void>;
}

/** Where warnings of storage code go (a corrupt blob dropped, a failed cleanup). */
export interface BlobAccessLogger {
  warn(message: string): void;
}

export const DEFAULT_CHUNK_SIZE_BYTES = 1024 * 1024;
