import type { Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { nodeCrypto } from '../node-crypto.js';
import type { MessageCodec } from '../proto.js';
import type { Digest } from './digest.js';

/** The digest of a buffer: one pass of SHA-256 over it, no copy (one-shot: no Hash object per call). */
export function digestOf(data: Uint8Array): Digest {
  return { hash: nodeCrypto().hash('sha256', data, 'hex'), sizeBytes: data.byteLength };
}

/** Incremental SHA-256 that also counts bytes, for data that arrives in chunks. */
export class DigestHasher {
  private readonly hash: Hash = nodeCrypto().createHash('sha256');
  private size = 0;

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.size += chunk.byteLength;
  }

  /** Bytes hashed so far. */
  get sizeBytes(): number {
    return this.size;
  }

  /** The digest of everything hashed; the hasher cannot be used afterwards. */
  digest(): Digest {
    return { hash: this.hash.digest('hex'), sizeBytes: this.size };
  }
}

/** The digest of a stream of chunks (a Readable, a generator...), consumed to the end. */
export async function digestOfStream(source: AsyncIterable<Uint8Array>): Promise<Digest> {
  const hasher = new DigestHasher();
  for await (const chunk of source) hasher.update(chunk);
  return hasher.digest();
}

/** The digest of a file's content, read in 1 MiB chunks so memory stays flat for large files. */
export async function digestOfFile(path: string): Promise<Digest> {
  const file = await open(path, 'r');
  try {
    const hasher = new DigestHasher();
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hasher.update(buffer.subarray(0, bytesRead));
    }
    return hasher.digest();
  } finally {
    await file.close();
  }
}

/** A serialized message together with its digest: what a client uploads and references. */
export interface EncodedMessage {
  readonly digest: Digest;
  readonly data: Buffer;
}

/** Bytes an encoder made, with their digest. */
export function encodedBytes(data: Buffer): EncodedMessage {
  return { digest: digestOf(data), data };
}

/** Serializes a message (canonically: zero fields omitted, fields in number order) and hashes the bytes. */
export function encodeMessage<T, I>(codec: MessageCodec<T, I>, message: I): EncodedMessage {
  const data = codec.encode(message);
  return { digest: digestOf(data), data };
}

/** The digest of a message's binary encoding, as REAPI keys Actions, Commands and Directories. */
export function digestOfMessage<T, I>(codec: MessageCodec<T, I>, message: I): Digest {
  return digestOf(codec.encode(message));
}
