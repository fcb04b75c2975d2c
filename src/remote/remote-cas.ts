import * as grpc from '@grpc/grpc-js';
import { createHash, randomUUID } from 'node:crypto';
import { bytestream, digestKey, googleRpc, reapi, zstdCompress, zstdDecompressBounded, type Digest } from '../core/index.js';
import { RemoteCallError, remoteCallError, rpcStatusError } from './remote-call-error.js';
import { unaryCall, type RemoteChannel } from './remote-channel.js';
import { MemoryBlobSink, readByteStream, type BlobSink } from './byte-stream-read.js';
import { isRetryable, type Retrier } from './retrier.js';
import { ByteStreamUpload } from './byte-stream-write.js';

/** A blob to upload: its digest and how to get its bytes when the server lacks it. */
export interface BlobSource {
  readonly digest: Digest;
  readonly data: () => Promise<Buffer>;
}

/** Limits the server advertises (GetCapabilities), with REAPI's meaning of 0 (no limit) resolved. */
export interface CasLimits {
  /** Largest BatchUpdateBlobs / BatchReadBlobs request or response. */
  readonly maxBatchTotalSizeBytes: number;
  /** Largest blob the server stores; 0: no limit. */
  readonly maxCasBlobSizeBytes: number;
  /** `--remote_cache_compression` and the server takes zstd on ByteStream (`compressed-blobs/zstd/`). */
  readonly zstdStreams?: boolean;
  /** ... and in BatchUpdateBlobs / BatchReadBlobs. */
  readonly zstdBatches?: boolean;
}

/** Digests per FindMissingBlobs request (about 100 bytes each, far below any message limit). */
const FIND_MISSING_CHUNK = 10_000;
/**
 * Largest blob `read` holds whole in memory (the largest message the channel receives, too): a
 * server's claimed size must not decide how much Kiln allocates. Outputs are streamed to files.
 */
export const MAX_BUFFERED_READ_BYTES = 64 * 1024 * 1024;
/** Bytes a batch entry costs besides its data (digest, field tags, lengths). */
const BATCH_ENTRY_OVERHEAD = 128;

/**
 * The client side of a REAPI CAS: FindMissingBlobs, BatchUpdateBlobs / ByteStream Write (resumed
 * with QueryWriteStatus after a broken stream) within the advertised limits, BatchReadBlobs /
 * ByteStream Read (resumed at the bytes received). Every read is checked against its digest.
 * Each call is retried as the Retrier says.
 */
export class RemoteCas {
  constructor(
    private readonly channel: RemoteChannel,
    private readonly instanceName: string,
    private readonly retrier: Retrier,
    private readonly timeoutMs: number,
  ) {}

  private get where(): string {
    return this.channel.endpoint.url;
  }

  async findMissing(digests: readonly Digest[], metadata: grpc.Metadata): Promise<Digest[]> {
    const unique = [...new Map(digests.map((d) => [digestKey(d), d])).values()];
    const missing: Digest[] = [];
    for (let i = 0; i < unique.length; i += FIND_MISSING_CHUNK) {
      const request = { instanceName: this.instanceName, blobDigests: unique.slice(i, i + FIND_MISSING_CHUNK) };
      const response = await this.retrier.run(() =>
        unaryCall(
          this.channel,
          reapi.ContentAddressableStorageService.FindMissingBlobs,
          request,
          metadata,
          this.timeoutMs,
          `FindMissingBlobs on ${this.where}`,
        ),
      );
      for (const d of response.missingBlobDigests) missing.push({ hash: d.hash, sizeBytes: d.sizeBytes });
    }
    return missing;
  }

  /** Uploads every blob of `blobs` (all of them: call findMissing first to send only what lacks). */
  async upload(blobs: readonly BlobSource[], limits: CasLimits, metadata: grpc.Metadata): Promise<void> {
    let batch: { digest: Digest; data: Buffer }[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const requests = batch;
      batch = [];
      batchBytes = 0;
      await this.batchUpdate(requests, limits, metadata);
    };
    for (const blob of blobs) {
      const size = blob.digest.sizeBytes;
      if (limits.maxCasBlobSizeBytes > 0 && size > limits.maxCasBlobSizeBytes) {
        throw new RemoteCallError(
          `uploading ${digestKey(blob.digest)} to ${this.where}: the blob is larger than the server's limit of ${limits.maxCasBlobSizeBytes} bytes`,
          grpc.status.RESOURCE_EXHAUSTED,
        );
      }
      const data = await blob.data();
      if (data.length !== size)
        throw new RemoteCallError(`uploading ${digestKey(blob.digest)}: the file changed while it was uploaded (${data.length} bytes)`, grpc.status.ABORTED);
      const cost = size + BATCH_ENTRY_OVERHEAD;
      if (cost > limits.maxBatchTotalSizeBytes / 2) {
        await this.write(blob.digest, data, limits, metadata);
        continue;
      }
      if (batchBytes + cost > limits.maxBatchTotalSizeBytes - BATCH_ENTRY_OVERHEAD) await flush();
      batch.push({ digest: blob.digest, data });
      batchBytes += cost;
    }
    await flush();
  }

  private async batchUpdate(requests: readonly { digest: Digest; data: Buffer }[], limits: CasLimits, metadata: grpc.Metadata): Promise<void> {
    let pending = limits.zstdBatches ? requests.map((r) => ({ ...r, data: zstdCompress(r.data), compressor: reapi.Compressor_Value.ZSTD })) : requests;
    await this.retrier.run(async () => {
      const response = await unaryCall(
        this.channel,
        reapi.ContentAddressableStorageService.BatchUpdateBlobs,
        { instanceName: this.instanceName, requests: [...pending] },
        metadata,
        this.timeoutMs,
        `BatchUpdateBlobs on ${this.where}`,
      );
      // Items that failed with a retryable code are sent again; any other failure ends the upload.
      const failed = new Map<string, googleRpc.Status>();
      for (const r of response.responses) {
        if (r.status && r.status.code !== googleRpc.Code.OK && r.digest) failed.set(digestKey(r.digest), r.status);
      }
      if (failed.size === 0) return;
      pending = pending.filter((r) => failed.has(digestKey(r.digest)));
      const [key, status] = failed.entries().next().value!;
      throw rpcStatusError(status, `uploading ${key} to ${this.where}`);
    });
  }

  /** ByteStream Write; after a broken stream QueryWriteStatus says where to continue. */
  private async write(digest: Digest, plain: Buffer, limits: CasLimits, metadata: grpc.Metadata): Promise<void> {
    const prefix = this.instanceName === '' ? '' : `${this.instanceName}/`;
    const compressed = limits.zstdStreams === true;
    const data = compressed ? zstdCompress(plain) : plain;
    const resourceName = `${prefix}uploads/${randomUUID()}/${compressed ? 'compressed-blobs/zstd' : 'blobs'}/${digest.hash}/${digest.sizeBytes}`;
    let attempt = 0;
    await this.retrier.run(async () => {
      let offset = 0;
      if (attempt++ > 0) {
        const status = await unaryCall(
          this.channel,
          bytestream.ByteStreamService.QueryWriteStatus,
          { resourceName },
          metadata,
          this.timeoutMs,
          `QueryWriteStatus on ${this.where}`,
        ).catch(
          () => undefined, // an unknown upload starts over
        );
        if (status?.complete) return;
        // A zstd frame cannot be resumed in the middle: compressed uploads start over.
        offset = !compressed && status && status.committedSize > 0 && status.committedSize <= data.length ? status.committedSize : 0;
      }
      await this.writeFrom(resourceName, data, offset, metadata);
    });
  }

  /** One Write stream from `offset` (ByteStreamUpload: one message at a time, under the idle bound). */
  private async writeFrom(resourceName: string, data: Buffer, offset: number, metadata: grpc.Metadata): Promise<void> {
    const upload = new ByteStreamUpload(this.channel, resourceName, data.length, metadata, this.timeoutMs, offset);
    await upload.write(data.subarray(offset));
    await upload.finish();
  }

  /** Whether `digest` is read in a BatchReadBlobs (its bytes and their entry within half the batch limit); larger blobs are streamed. */
  static batchable(digest: Digest, limits: CasLimits): boolean {
    return digest.sizeBytes + BATCH_ENTRY_OVERHEAD <= limits.maxBatchTotalSizeBytes / 2;
  }

  /** Bytes a blob takes of a batch's `max_batch_total_size_bytes`, with its entry. */
  static batchCost(digest: Digest): number {
    return digest.sizeBytes + BATCH_ENTRY_OVERHEAD;
  }

  /** A blob's bytes, checked against its digest; above MAX_BUFFERED_READ_BYTES refused (stream it to a file instead). */
  async read(digest: Digest, limits: CasLimits, metadata: grpc.Metadata): Promise<Buffer> {
    if (digest.sizeBytes === 0) return Buffer.alloc(0);
    if (digest.sizeBytes > MAX_BUFFERED_READ_BYTES) {
      throw new RemoteCallError(
        `reading ${digestKey(digest)} from ${this.where}: the blob is larger than the ${MAX_BUFFERED_READ_BYTES} bytes Kiln reads into memory (a file is streamed with readToFile)`,
        grpc.status.FAILED_PRECONDITION,
      );
    }
    if (RemoteCas.batchable(digest, limits)) {
      const answer = (await this.batchRead([digest], limits, metadata)).get(digestKey(digest))!;
      if (answer instanceof Error) throw answer;
      return answer;
    }
    const sink = new MemoryBlobSink();
    await this.stream(digest, sink, limits, metadata);
    return sink.bytes();
  }

  /**
   * Many small blobs in one BatchReadBlobs (the caller keeps them within the batch limit), each
   * checked against its digest. Items the server answers with a retryable code are asked for again
   * as the Retrier says; the answer maps each digest key to its bytes or to its own error (a missing
   * blob fails that blob only). A failed call fails every blob still unanswered.
   */
  async batchRead(digests: readonly Digest[], limits: CasLimits, metadata: grpc.Metadata): Promise<Map<string, Buffer | RemoteCallError>> {
    const answers = new Map<string, Buffer | RemoteCallError>();
    let pending = [...new Map(digests.map((d) => [digestKey(d), d])).values()];
    try {
      await this.retrier.run(async () => {
        const request = { instanceName: this.instanceName, digests: pending, acceptableCompressors: limits.zstdBatches ? [reapi.Compressor_Value.ZSTD] : [] };
        const response = await unaryCall(
          this.channel,
          reapi.ContentAddressableStorageService.BatchReadBlobs,
          request,
          metadata,
          this.timeoutMs,
          `BatchReadBlobs on ${this.where}`,
        );
        const byKey = new Map<string, reapi.BatchReadBlobsResponse_Response>();
        for (const item of response.responses) if (item.digest) byKey.set(digestKey({ hash: item.digest.hash, sizeBytes: item.digest.sizeBytes }), item);
        let retry: RemoteCallError | undefined;
        const again: Digest[] = [];
        for (const digest of pending) {
          const key = digestKey(digest);
          const item = byKey.get(key);
          let answer: Buffer | RemoteCallError;
          try {
            answer = this.checked(digest, this.itemData(digest, item));
          } catch (e) {
            answer = e instanceof RemoteCallError ? e : remoteCallError(e, `reading ${key} from ${this.where}`);
          }
          if (answer instanceof RemoteCallError && isRetryable(answer)) {
            again.push(digest);
            retry ??= answer;
          } else answers.set(key, answer);
        }
        pending = again;
        if (retry) throw retry;
      });
    } catch (e) {
      const failure = remoteCallError(e, `BatchReadBlobs on ${this.where}`);
      for (const digest of pending) answers.set(digestKey(digest), failure);
    }
    return answers;
  }

  /** The plain bytes of one BatchReadBlobs answer (decompressed); throws its status when it failed. */
  private itemData(digest: Digest, item: reapi.BatchReadBlobsResponse_Response | undefined): Buffer {
    if (!item) throw new RemoteCallError(`BatchReadBlobs on ${this.where}: no answer for ${digestKey(digest)}`, grpc.status.INTERNAL);
    if (item.status && item.status.code !== googleRpc.Code.OK) throw rpcStatusError(item.status, `reading ${digestKey(digest)} from ${this.where}`);
    if (item.compressor === reapi.Compressor_Value.ZSTD) return zstdDecompress(item.data, digest.sizeBytes);
    if (item.compressor !== reapi.Compressor_Value.IDENTITY)
      throw new RemoteCallError(`BatchReadBlobs on ${this.where}: answered with a compressor that was not asked for`, grpc.status.INTERNAL);
    return Buffer.from(item.data.buffer, item.data.byteOffset, item.data.byteLength);
  }

  /** `data` if it is the blob `digest` names; a DATA_LOSS error naming the endpoint otherwise. */
  private checked(digest: Digest, data: Buffer): Buffer {
    const hash = createHash('sha256').update(data).digest('hex');
    if (hash !== digest.hash || data.length !== digest.sizeBytes) {
      throw new RemoteCallError(
        `blob ${digestKey(digest)} read from ${this.where} does not match its digest (got ${hash}/${data.length})`,
        grpc.status.DATA_LOSS,
      );
    }
    return data;
  }

  /** Streams a blob into `sink` (ByteStream Read, checked against its digest; see readByteStream). */
  stream(digest: Digest, sink: BlobSink, limits: CasLimits, metadata: grpc.Metadata): Promise<void> {
    return readByteStream(digest, sink, {
      channel: this.channel,
      instanceName: this.instanceName,
      compressed: limits.zstdStreams === true,
      metadata,
      retrier: this.retrier,
      timeoutMs: this.timeoutMs,
    });
  }
}

/**
 * REAPI: max_batch_total_size_bytes 0 means no limit; Bazel then assumes gRPC's 4 MiB message limit.
 * zstd is used where `compression` asks for it and the server lists it.
 */
export function casLimitsOf(capabilities: reapi.CacheCapabilities | null | undefined, compression = false): CasLimits {
  const advertised = capabilities?.maxBatchTotalSizeBytes ?? 0;
  const zstd = reapi.Compressor_Value.ZSTD;
  return {
    maxBatchTotalSizeBytes: advertised > 0 ? Math.min(advertised, 4 * 1024 * 1024) : 4 * 1024 * 1024,
    maxCasBlobSizeBytes: capabilities?.maxCasBlobSizeBytes ?? 0,
    zstdStreams: compression && (capabilities?.supportedCompressors ?? []).includes(zstd),
    zstdBatches: compression && (capabilities?.supportedBatchUpdateCompressors ?? []).includes(zstd),
  };
}

/** Decompresses a blob the server sent compressed, bounded by the digest's size (a hostile frame cannot inflate without end). */
function zstdDecompress(data: Uint8Array, sizeBytes: number): Buffer {
  try {
    return zstdDecompressBounded(data, sizeBytes, 'a zstd-compressed blob from the server');
  } catch (e) {
    throw new RemoteCallError((e as Error).message, grpc.status.DATA_LOSS, undefined, [], { cause: e });
  }
}
