import type * as grpc from '@grpc/grpc-js';
import {
  digestKey,
  digestOf,
  InvalidArgumentError,
  NotFoundError,
  parseDigest,
  reapi,
  zstdCompress,
  zstdDecompressBounded,
  type Digest,
} from '../src/core/index.js';
import type { BlobAccess } from '../src/core/blobstore/index.js';
import { FastCdc2020Chunker } from './fast-cdc-2020.js';
import { toRpcStatus, toServiceError, withContext } from './grpc-status.js';
import { reportUnexpected, unaryHandler, type ServiceContext } from './service-context.js';
import { checkDigestFunction } from './storage-instances.js';
import { treePages } from './tree-pages.js';

/** build.bazel.remote.execution.v2.ContentAddressableStorage over each instance's CAS. */
export function contentAddressableStorageService(ctx: ServiceContext): reapi.ContentAddressableStorageServer {
  const { limits } = ctx.config;
  const chunker = new FastCdc2020Chunker(ctx.config.chunking);

  return {
    FindMissingBlobs: unaryHandler(
      ctx,
      'FindMissingBlobs',
      () => 0,
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas } = ctx.instances.get(request.instanceName);
        const unique = uniqueDigests(request.blobDigests.map((d, i) => parseDigest(d, `blob_digests[${i}]`)));
        return { missingBlobDigests: await cas.findMissing(unique) };
      },
    ),

    BatchUpdateBlobs: unaryHandler(
      ctx,
      'BatchUpdateBlobs',
      // Capped: an oversized batch must get its INVALID_ARGUMENT, not a retry hint.
      (r) =>
        Math.min(
          limits.maxBatchTotalSizeBytes,
          r.requests.reduce((n, b) => n + b.data.length, 0),
        ),
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas } = ctx.instances.get(request.instanceName);
        const total = request.requests.reduce((n, b) => n + b.data.length, 0);
        if (total > limits.maxBatchTotalSizeBytes) {
          throw new InvalidArgumentError(
            `requests: ${total} bytes in total exceed max_batch_total_size_bytes (${limits.maxBatchTotalSizeBytes}); use ByteStream Write for large blobs`,
          );
        }
        const responses = await Promise.all(
          request.requests.map(async (blob, i) => {
            try {
              const digest = parseDigest(blob.digest, `requests[${i}].digest`);
              checkBlobSize(digest, limits.maxCasBlobSizeBytes, `requests[${i}]`);
              await ctx.storageOps.run(() => cas.put(digest, plainData(blob, i)));
              return { digest: blob.digest, status: { code: 0 } };
            } catch (e) {
              return { digest: blob.digest, status: toRpcStatus(reportUnexpected(ctx, 'BatchUpdateBlobs', e)) };
            }
          }),
        );
        return { responses };
      },
    ),

    BatchReadBlobs: unaryHandler(
      ctx,
      'BatchReadBlobs',
      (r) =>
        Math.min(
          limits.maxBatchTotalSizeBytes,
          r.digests.reduce((n, d) => n + (Number.isSafeInteger(d.sizeBytes) && d.sizeBytes > 0 ? d.sizeBytes : 0), 0),
        ),
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas } = ctx.instances.get(request.instanceName);
        const digests = request.digests.map((d, i) => parseDigest(d, `digests[${i}]`));
        const total = digests.reduce((n, d) => n + d.sizeBytes, 0);
        if (total > limits.maxBatchTotalSizeBytes) {
          throw new InvalidArgumentError(
            `digests: ${total} bytes in total exceed max_batch_total_size_bytes (${limits.maxBatchTotalSizeBytes}); use ByteStream Read for large blobs`,
          );
        }
        const zstd = request.acceptableCompressors.includes(reapi.Compressor_Value.ZSTD);
        const responses = await Promise.all(
          digests.map(async (digest): Promise<reapi.BatchReadBlobsResponse_ResponseInit> => {
            try {
              const data = await ctx.storageOps.run(() => cas.get(digest));
              if (zstd && data.length >= 64) {
                const compressed = zstdCompress(data);
                if (compressed.length < data.length) {
                  return { digest, data: compressed, compressor: reapi.Compressor_Value.ZSTD, status: { code: 0 } };
                }
              }
              return { digest, data, compressor: reapi.Compressor_Value.IDENTITY, status: { code: 0 } };
            } catch (e) {
              return { digest, status: toRpcStatus(reportUnexpected(ctx, 'BatchReadBlobs', e)) };
            }
          }),
        );
        return { responses };
      },
    ),

    GetTree: (call: grpc.ServerWritableStream<reapi.GetTreeRequest, reapi.GetTreeResponseInit>) => {
      void serveGetTree(ctx, call);
    },

    SplitBlob: unaryHandler(
      ctx,
      'SplitBlob',
      () => chunker.maxSize,
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas } = ctx.instances.get(request.instanceName);
        const digest = parseDigest(request.blobDigest, 'blob_digest');
        const chunkDigests: Digest[] = [];
        if (digest.sizeBytes > 0) {
          const blob = await cas.read(digest);
          for await (const chunk of chunker.chunks(blob.chunks)) {
            const chunkDigest = digestOf(chunk);
            await ctx.storageOps.run(() => cas.put(chunkDigest, chunk));
            chunkDigests.push(chunkDigest);
          }
        }
        // Whatever the client preferred, the chunks are FastCDC 2020's: the server may choose (REAPI).
        return { chunkDigests, chunkingFunction: reapi.ChunkingFunction_Value.FAST_CDC_2020 };
      },
    ),

    SpliceBlob: unaryHandler(
      ctx,
      'SpliceBlob',
      () => 0,
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas } = ctx.instances.get(request.instanceName);
        const digest = parseDigest(request.blobDigest, 'blob_digest');
        checkBlobSize(digest, limits.maxCasBlobSizeBytes, 'blob_digest');
        const chunks = request.chunkDigests.map((d, i) => parseDigest(d, `chunk_digests[${i}]`));
        const total = chunks.reduce((n, d) => n + d.sizeBytes, 0);
        if (total !== digest.sizeBytes) {
          throw new InvalidArgumentError(`chunk_digests: the chunks add up to ${total} bytes, but blob_digest says ${digest.sizeBytes}`);
        }
        const missing = await cas.findMissing(uniqueDigests([digest, ...chunks]));
        if (!missing.some((d) => digestKey(d) === digestKey(digest))) return { blobDigest: digest };
        const missingChunks = missing.filter((d) => digestKey(d) !== digestKey(digest));
        if (missingChunks.length > 0) {
          throw new NotFoundError(`chunk_digests: ${missingChunks.length} chunks are not in the CAS (e.g. ${digestKey(missingChunks[0]!)})`);
        }
        await spliceInto(cas, digest, chunks);
        return { blobDigest: digest };
      },
    ),
  };
}

/** Concatenates stored chunks into a new blob; the CAS's verification rejects a wrong digest. */
async function spliceInto(cas: BlobAccess, digest: Digest, chunks: readonly Digest[]): Promise<void> {
  const writer = await cas.beginWrite(digest);
  try {
    for (const chunk of chunks) {
      if (chunk.sizeBytes === 0) continue;
      const read = await cas.read(chunk);
      for await (const piece of read.chunks) await writer.write(piece);
    }
    await writer.commit();
  } catch (e) {
    await writer.abort();
    if (e instanceof InvalidArgumentError) throw e.withContext('blob_digest: the spliced chunks do not match');
    throw e;
  }
}

async function serveGetTree(ctx: ServiceContext, call: grpc.ServerWritableStream<reapi.GetTreeRequest, reapi.GetTreeResponseInit>): Promise<void> {
  let admission;
  try {
    admission = ctx.limiter.admit('GetTree');
  } catch (e) {
    call.emit('error', toServiceError(e));
    return;
  }
  try {
    const request = call.request;
    checkDigestFunction(request.digestFunction);
    const { cas } = ctx.instances.get(request.instanceName);
    const root = parseDigest(request.rootDigest, 'root_digest');
    if (request.pageSize < 0) throw new InvalidArgumentError(`page_size: must not be negative, got ${request.pageSize}`);
    const pageSize = request.pageSize === 0 ? ctx.config.limits.defaultTreePageSize : request.pageSize;
    for await (const page of treePages(cas, root, pageSize, request.pageToken, (task) => ctx.storageOps.run(task))) {
      if (call.cancelled) return;
      if (!call.write(page)) await new Promise((resolve) => call.once('drain', resolve));
    }
    call.end();
  } catch (e) {
    call.emit('error', toServiceError(reportUnexpected(ctx, 'GetTree', withContext(e, 'GetTree'), call.metadata)));
  } finally {
    admission.release();
  }
}

/** The uncompressed bytes of a BatchUpdateBlobs entry. */
function plainData(blob: reapi.BatchUpdateBlobsRequest_Request, i: number): Buffer {
  switch (blob.compressor) {
    case reapi.Compressor_Value.IDENTITY:
      return blob.data;
    case reapi.Compressor_Value.ZSTD:
      return zstdDecompressBounded(blob.data, blob.digest?.sizeBytes ?? 0, `requests[${i}].data`);
    default:
      throw new InvalidArgumentError(
        `requests[${i}].compressor: ${reapi.Compressor_Value[blob.compressor] ?? blob.compressor} is not supported (supported: IDENTITY, ZSTD)`,
      );
  }
}

export function checkBlobSize(digest: Digest, max: number, field: string): void {
  if (max > 0 && digest.sizeBytes > max) {
    throw new InvalidArgumentError(`${field}: blob of ${digest.sizeBytes} bytes exceeds max_cas_blob_size_bytes (${max})`);
  }
}

function uniqueDigests(digests: readonly Digest[]): Digest[] {
  const byKey = new Map<string, Digest>();
  for (const d of digests) byKey.set(digestKey(d), d);
  return [...byKey.values()];
}
