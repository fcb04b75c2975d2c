import * as grpc from '@grpc/grpc-js';
import { createHash, type Hash } from 'node:crypto';
import { type bytestream, digestKey, ZstdDecompressor, type Digest } from '../core/index.js';
import { RemoteCallError, remoteCallError } from './remote-call-error.js';
import type { RemoteChannel } from './remote-channel.js';
import type { Retrier } from './retrier.js';
import { StreamIdleBound } from './stream-idle-bound.js';

/** Where a streamed blob goes: memory (bounded by the caller) or a file. */
export interface BlobSink {
  /** The blob's next plain bytes, at `offset` (0 again when a compressed read starts over). Awaited before more is read. */
  write(data: Buffer, offset: number): Promise<void>;
}

export interface ByteStreamReadOptions {
  readonly channel: RemoteChannel;
  readonly instanceName: string;
  /** `compressed-blobs/zstd/` instead of `blobs/`. */
  readonly compressed: boolean;
  readonly metadata: grpc.Metadata;
  readonly retrier: Retrier;
  /** `--remote_timeout`: the idle bound between two messages. */
  readonly timeoutMs: number;
}

/**
 * ByteStream Read of `digest` into `sink`, hashed as it streams. After a broken stream the read
 * continues at the bytes received (a compressed read starts over: its offsets are not the blob's).
 * Fails (DATA_LOSS, not retried) as soon as the server sends more than the digest's size, when the
 * stream ends short of it, and when the bytes do not hash to the digest.
 */
export async function readByteStream(digest: Digest, sink: BlobSink, options: ByteStreamReadOptions): Promise<void> {
  const { channel, compressed } = options;
  const prefix = options.instanceName === '' ? '' : `${options.instanceName}/`;
  const resourceName = `${prefix}${compressed ? 'compressed-blobs/zstd' : 'blobs'}/${digestKey(digest)}`;
  const what = `ByteStream.Read of ${resourceName} on ${channel.endpoint.url}`;
  const fail = (detail: string) => new RemoteCallError(`${what}: ${detail}`, grpc.status.DATA_LOSS);
  /** A decoder failure (not zstd, more than the digest's size) as this read's DATA_LOSS. */
  const decoded = <T>(step: () => T): T => {
    try {
      return step();
    } catch (e) {
      throw fail((e as Error).message);
    }
  };
  let received = 0;
  let hash: Hash = createHash('sha256');
  await options.retrier.run(async () => {
    // A compressed stream cannot resume mid-frame: start over.
    const decoder = compressed ? new ZstdDecompressor(digest.sizeBytes, 'the zstd stream') : undefined;
    if (decoder) {
      received = 0;
      hash = createHash('sha256');
    }
    /** Compressed bytes taken: a stream of frames that decompress to nothing must end too. */
    let wireBytes = 0;
    const call = channel.byteStream.Read({ resourceName, readOffset: decoder ? 0 : received }, options.metadata);
    const idle = new StreamIdleBound(options.timeoutMs, what, () => call.cancel());
    try {
      for await (const response of call as AsyncIterable<bytestream.ReadResponse>) {
        idle.touch();
        const data = Buffer.from(response.data.buffer, response.data.byteOffset, response.data.byteLength);
        wireBytes += data.length;
        if (decoder && wireBytes > maxCompressedBytes(digest.sizeBytes))
          throw fail(`more compressed bytes (${wireBytes}) than a ${digest.sizeBytes}-byte blob can take`);
        for (const plain of decoder ? decoded(() => decoder.push(data)) : [data]) {
          if (received + plain.length > digest.sizeBytes) {
            throw fail(`the server sent more bytes than the digest's ${digest.sizeBytes}`);
          }
          hash.update(plain);
          await sink.write(plain, received);
          received += plain.length;
        }
        idle.touch();
      }
      if (decoder) decoded(() => decoder.finish());
    } catch (e) {
      call.cancel();
      throw idle.expired ?? remoteCallError(e, what);
    } finally {
      idle.stop();
    }
  });
  if (received !== digest.sizeBytes) throw fail(`the stream ended after ${received} of the digest's ${digest.sizeBytes} bytes`);
  const got = hash.digest('hex');
  if (got !== digest.hash) throw fail(`the blob read does not match its digest (its SHA-256 is ${got})`);
}

/** zstd's worst case (incompressible data: 3 bytes a 128 KiB block, plus a frame header) with room to spare. */
function maxCompressedBytes(sizeBytes: number): number {
  return sizeBytes + Math.ceil(sizeBytes / 1024) + 64 * 1024;
}

/** A sink into memory, for blobs the caller keeps whole (it bounds their size). */
export class MemoryBlobSink implements BlobSink {
  private chunks: Buffer[] = [];
  private length = 0;

  async write(data: Buffer, offset: number): Promise<void> {
    if (offset === 0) {
      this.chunks = [];
      this.length = 0;
    }
    this.chunks.push(data);
    this.length += data.length;
  }

  bytes(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
  }
}
