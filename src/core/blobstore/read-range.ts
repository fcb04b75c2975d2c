import { InvalidArgumentError, OutOfRangeError } from '../status-error.js';
import { DEFAULT_CHUNK_SIZE_BYTES, type BlobRead, type ReadRange } from './blob-access.js';

/** A validated range: bytes [start, end) of a blob of `sizeBytes`, yielded in chunks of `chunkSize`. */
export interface ResolvedRange {
  readonly start: number;
  readonly end: number;
  readonly chunkSize: number;
}

/**
 * Checks a ReadRange against a blob size.
 * @throws InvalidArgumentError for a negative or fractional offset/limit/chunk size
 * @throws OutOfRangeError for an offset beyond the end of the blob
 */
export function resolveRange(sizeBytes: number, range: ReadRange = {}): ResolvedRange {
  const offset = range.offset ?? 0;
  const limit = range.limit ?? 0;
  const chunkSize = range.chunkSizeBytes ?? DEFAULT_CHUNK_SIZE_BYTES;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(`read_offset must be a non-negative integer, got ${offset}`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new InvalidArgumentError(`read_limit must be a non-negative integer, got ${limit}`);
  if (!Number.isSafeInteger(chunkSize) || chunkSize <= 0) throw new InvalidArgumentError(`chunk size must be a positive integer, got ${chunkSize}`);
  if (offset > sizeBytes) throw new OutOfRangeError(`read_offset ${offset} is beyond the end of the blob (${sizeBytes} bytes)`);
  const end = limit === 0 ? sizeBytes : Math.min(sizeBytes, offset + limit);
  return { start: offset, end, chunkSize };
}

/** A BlobRead over a buffer already in memory: chunks are views, not copies. */
export function bufferRead(data: Buffer, range?: ReadRange): BlobRead {
  const { start, end, chunkSize } = resolveRange(data.length, range);
  return { sizeBytes: data.length, chunks: sliceChunks(data, start, end, chunkSize) };
}

async function* sliceChunks(data: Buffer, start: number, end: number, chunkSize: number): AsyncGenerator<Buffer> {
  for (let pos = start; pos < end; pos += chunkSize) yield data.subarray(pos, Math.min(end, pos + chunkSize));
}
