import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import type { Digest } from '../core/index.js';

/** Bytes that are not the blob their digest names (too many, too few, another hash). */
export class BlobContentError extends Error {}

/**
 * Writes a blob's chunks into `file` from position 0, hashing as it goes: more bytes than the digest's
 * size stop the copy at once, and a short or different blob fails at the end. Memory holds one chunk.
 */
export async function writeVerifiedChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, digest: Digest, file: FileHandle): Promise<void> {
  const hash = createHash('sha256');
  let position = 0;
  for await (const chunk of chunks) {
    if (position + chunk.byteLength > digest.sizeBytes) throw new BlobContentError(`the blob holds more than the ${digest.sizeBytes} bytes its digest says`);
    hash.update(chunk);
    await writeFully(file, chunk, position);
    position += chunk.byteLength;
  }
  if (position !== digest.sizeBytes) throw new BlobContentError(`the blob holds ${position} bytes, not the ${digest.sizeBytes} its digest says`);
  if (hash.digest('hex') !== digest.hash) throw new BlobContentError('the blob does not match its digest');
}

/** Writes all of `data` at `position` (a write may take fewer bytes than it was given). */
export async function writeFully(file: FileHandle, data: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < data.byteLength; ) done += (await file.write(data, done, data.byteLength - done, position + done)).bytesWritten;
}

const { O_CREAT, O_EXCL, O_WRONLY, O_NOFOLLOW } = constants;

/**
 * Creates the file `path` for writing, new: O_EXCL never follows a symlink there and fails on anything
 * that exists, which is removed (a temporary file a crash left) before one more try.
 */
export async function createExclusively(path: string, mode = 0o644): Promise<FileHandle> {
  const flags = O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW;
  try {
    return await open(path, flags, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    await unlink(path);
    return open(path, flags, mode);
  }
}
