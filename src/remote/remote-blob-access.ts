import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import {
  digestKey,
  FailedPreconditionError,
  type googleRpc,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  PassedOnStatusError,
  reapi,
  ResourceExhaustedError,
  UnavailableError,
  type Digest,
  type StatusError,
} from '../core/index.js';
import { BufferedBlobWriter, bufferRead, resolveRange, type BlobAccess, type BlobRead, type BlobWriter, type ReadRange } from '../core/blobstore/index.js';
import { readByteStream, type BlobSink } from './byte-stream-read.js';
import { ByteStreamUpload } from './byte-stream-write.js';
import { RemoteCallError } from './remote-call-error.js';
import { casLimitsOf, RemoteCas, type CasLimits } from './remote-cas.js';
import { RemoteChannel, unaryCall } from './remote-channel.js';
import type { RemoteEndpoint } from './remote-endpoint.js';
import type { TlsFiles } from './remote-tls.js';
import { DEFAULT_BACKOFF, Retrier } from './retrier.js';

export interface RemoteBlobAccessOptions {
  readonly endpoint: RemoteEndpoint;
  /** The instance name on the remote server. */
  readonly instanceName: string;
  /** `cas`: ContentAddressableStorage + ByteStream; `ac`: ActionCache (values are serialized ActionResults). */
  readonly keyspace: 'cas' | 'ac';
  readonly tls?: TlsFiles;
  /** Sent as `authorization: Bearer TOKEN` on every call; a function is asked each time (a token file read again when it changes). */
  readonly token?: string | (() => string);
  /** Deadline of each unary call, idle bound of each stream. */
  readonly timeoutMs: number;
  /** Retries of a retryable failure (UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED). */
  readonly retries: number;
}

/** AC lookups findMissing makes at once. */
const AC_LOOKUPS_AT_ONCE = 16;

/**
 * A BlobAccess on another REAPI server (a `kiln storage` node), through Kiln's client: RemoteCas for
 * FindMissingBlobs, batches and ByteStream reads (every read checked against its digest), a
 * ByteStream Write fed chunk by chunk for large uploads, ActionCache for the `ac` keyspace. Large
 * blobs stream both ways, never whole in memory. Failures are StatusErrors with the server's code
 * (NOT_FOUND stays NOT_FOUND, so decorators above see a miss), except that the node refusing this
 * server's credentials is INTERNAL: the caller's own credentials were fine.
 *
 * `delete` does nothing: REAPI has no delete, and a node drops its own corrupt blobs (its CAS
 * verifies). A ranged read streams the blob from its start and skips to the range (ByteStream
 * offsets would give bytes no digest can check).
 */
export class RemoteBlobAccess implements BlobAccess {
  private readonly channel: RemoteChannel;
  private readonly retrier: Retrier;
  private readonly cas: RemoteCas;
  private limitsAnswer: Promise<CasLimits> | undefined;

  constructor(private readonly options: RemoteBlobAccessOptions) {
    this.channel = new RemoteChannel(options.endpoint, options.tls);
    this.retrier = new Retrier({ ...DEFAULT_BACKOFF, maxRetries: options.retries });
    this.cas = new RemoteCas(this.channel, options.instanceName, this.retrier, options.timeoutMs);
  }

  get endpoint(): string {
    return this.options.endpoint.url;
  }

  close(): void {
    this.channel.close();
  }

  get(digest: Digest): Promise<Buffer> {
    return relayed(async () => {
      if (this.options.keyspace === 'ac') return this.getActionResult(digest);
      return this.cas.read(digest, await this.limits(), this.metadata());
    });
  }

  read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return relayed(async () => {
      if (this.options.keyspace === 'ac') return bufferRead(await this.getActionResult(digest), range);
      const { start, end, chunkSize } = resolveRange(digest.sizeBytes, range);
      if (start === end) {
        if ((await this.findMissing([digest])).length > 0) throw new NotFoundError(`blob ${digestKey(digest)} not found on ${this.endpoint}`);
        return bufferRead(Buffer.alloc(0));
      }
      const feed = new ChunkFeed();
      readByteStream(digest, feed, {
        channel: this.channel,
        instanceName: this.options.instanceName,
        compressed: false,
        metadata: this.metadata(),
        retrier: this.retrier,
        timeoutMs: this.options.timeoutMs,
      }).then(
        () => feed.finish(),
        (e: unknown) => feed.finish(statusErrorOf(e)),
      );
      await feed.started();
      return { sizeBytes: digest.sizeBytes, chunks: feed.chunks(start, end, end < digest.sizeBytes, chunkSize) };
    });
  }

  put(digest: Digest, data: Buffer): Promise<void> {
    return relayed(async () => {
      if (this.options.keyspace === 'ac') return this.updateActionResult(digest, data);
      await this.cas.upload([{ digest, data: async () => data }], await this.limits(), this.metadata());
    });
  }

  beginWrite(digest: Digest): Promise<BlobWriter> {
    return relayed(async () => {
      if (this.options.keyspace === 'ac' || RemoteCas.batchable(digest, await this.limits())) {
        return new BufferedBlobWriter((data) => this.put(digest, data), digest.sizeBytes);
      }
      const prefix = this.options.instanceName === '' ? '' : `${this.options.instanceName}/`;
      const name = `${prefix}uploads/${randomUUID()}/blobs/${digest.hash}/${digest.sizeBytes}`;
      return new StreamedBlobWriter(digest, new ByteStreamUpload(this.channel, name, digest.sizeBytes, this.metadata(), this.options.timeoutMs));
    });
  }

  findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    return relayed(async () => {
      if (this.options.keyspace === 'cas') return this.cas.findMissing(digests, this.metadata());
      const missing: Digest[] = [];
      for (let i = 0; i < digests.length; i += AC_LOOKUPS_AT_ONCE) {
        await Promise.all(
          digests.slice(i, i + AC_LOOKUPS_AT_ONCE).map(async (d) => {
            try {
              await this.getActionResult(d);
            } catch (e) {
              if (!(e instanceof RemoteCallError && e.code === grpc.status.NOT_FOUND)) throw e;
              missing.push(d);
            }
          }),
        );
      }
      return missing;
    });
  }

  async delete(): Promise<void> {}

  /** The node's CAS limits, asked once; a failure is not kept (the node may be back on the next call). */
  private limits(): Promise<CasLimits> {
    this.limitsAnswer ??= this.retrier
      .run(() =>
        unaryCall(
          this.channel,
          reapi.CapabilitiesService.GetCapabilities,
          { instanceName: this.options.instanceName },
          this.metadata(),
          this.options.timeoutMs,
          `GetCapabilities on ${this.endpoint}`,
        ),
      )
      .then((caps) => casLimitsOf(caps.cacheCapabilities))
      .catch((e: unknown) => {
        this.limitsAnswer = undefined;
        throw e;
      });
    return this.limitsAnswer;
  }

  private async getActionResult(actionDigest: Digest): Promise<Buffer> {
    const result = await this.retrier.run(() =>
      unaryCall(
        this.channel,
        reapi.ActionCacheService.GetActionResult,
        { instanceName: this.options.instanceName, actionDigest, inlineStdout: false, inlineStderr: false },
        this.metadata(),
        this.options.timeoutMs,
        `GetActionResult on ${this.endpoint}`,
      ),
    );
    return Buffer.from(reapi.ActionResult.encode(result));
  }

  private async updateActionResult(actionDigest: Digest, data: Buffer): Promise<void> {
    let actionResult: reapi.ActionResult;
    try {
      actionResult = reapi.ActionResult.decode(data);
    } catch (e) {
      throw new InvalidArgumentError(`action result for ${digestKey(actionDigest)} is not a valid ActionResult: ${(e as Error).message}`);
    }
    await this.retrier.run(() =>
      unaryCall(
        this.channel,
        reapi.ActionCacheService.UpdateActionResult,
        { instanceName: this.options.instanceName, actionDigest, actionResult },
        this.metadata(),
        this.options.timeoutMs,
        `UpdateActionResult on ${this.endpoint}`,
      ),
    );
  }

  private metadata(): grpc.Metadata {
    const metadata = new grpc.Metadata();
    const { token } = this.options;
    if (token !== undefined) metadata.set('authorization', `Bearer ${typeof token === 'function' ? token() : token}`);
    return metadata;
  }
}

/** A large upload relayed to the node as it arrives. */
class StreamedBlobWriter implements BlobWriter {
  private closed = false;

  constructor(
    private readonly digest: Digest,
    private readonly upload: ByteStreamUpload,
  ) {}

  get writtenBytes(): number {
    return this.upload.writtenBytes;
  }

  write(chunk: Uint8Array): Promise<void> {
    return relayed(async () => {
      if (this.closed) throw new InvalidArgumentError('write after the upload was committed or aborted');
      if (this.upload.writtenBytes + chunk.byteLength > this.digest.sizeBytes) {
        await this.abort();
        throw new InvalidArgumentError(`blob ${digestKey(this.digest)}: upload exceeds the digest's size of ${this.digest.sizeBytes} bytes`);
      }
      await this.upload.write(chunk);
    });
  }

  commit(): Promise<void> {
    return relayed(async () => {
      if (this.closed) throw new InvalidArgumentError('commit after the upload was committed or aborted');
      this.closed = true;
      await this.upload.finish();
    });
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.upload.cancel();
  }
}

/**
 * The hand-over between readByteStream (which pushes a blob's bytes, awaiting each push) and a
 * BlobRead's consumer (which pulls chunks): one push at a time, taken when the consumer asks, so the
 * stream goes at the consumer's pace. A consumer that stops early cancels the stream.
 */
class ChunkFeed implements BlobSink {
  private pushed: { data: Buffer; offset: number } | undefined;
  private outcome: { error?: StatusError } | undefined;
  private consumerWaiting: (() => void) | undefined;
  private producerWaiting: (() => void) | undefined;
  private stopped = false;

  write(data: Buffer, offset: number): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the reader stopped'));
    this.pushed = { data, offset };
    this.wakeConsumer();
    return new Promise<void>((resolve, reject) => {
      this.producerWaiting = () => (this.stopped ? reject(new Error('the reader stopped')) : resolve());
    });
  }

  finish(error?: StatusError): void {
    this.outcome = error ? { error } : {};
    this.wakeConsumer();
  }

  /** Resolves at the first bytes or the end; throws the failure that came first (NOT_FOUND, ...). */
  async started(): Promise<void> {
    await this.something();
    if (!this.pushed && this.outcome?.error) throw this.outcome.error;
  }

  /** Bytes [start, end) in chunks of at most chunkSize; `partial`: stop at `end` instead of reading (and verifying) to the blob's end. */
  async *chunks(start: number, end: number, partial: boolean, chunkSize: number): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        await this.something();
        const pushed = this.pushed;
        if (!pushed) {
          if (this.outcome?.error) throw this.outcome.error;
          return;
        }
        this.pushed = undefined;
        const from = Math.max(start, pushed.offset);
        const to = Math.min(end, pushed.offset + pushed.data.length);
        for (let p = from; p < to; p += chunkSize) yield pushed.data.subarray(p - pushed.offset, Math.min(to, p + chunkSize) - pushed.offset);
        if (partial && pushed.offset + pushed.data.length >= end) return;
        this.wakeProducer();
      }
    } finally {
      if (!this.outcome) {
        this.stopped = true;
        this.wakeProducer();
      }
    }
  }

  private something(): Promise<void> {
    if (this.pushed || this.outcome) return Promise.resolve();
    return new Promise<void>((resolve) => (this.consumerWaiting = resolve));
  }

  private wakeConsumer(): void {
    const wake = this.consumerWaiting;
    this.consumerWaiting = undefined;
    wake?.();
  }

  private wakeProducer(): void {
    const wake = this.producerWaiting;
    this.producerWaiting = undefined;
    wake?.();
  }
}

/** `op` with any RemoteCallError it throws turned into the StatusError of its code. */
async function relayed<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw statusErrorOf(e);
  }
}

/** The StatusError a relayed failure is answered with: the node's code, its message. */
function statusErrorOf(e: unknown): StatusError {
  if (!(e instanceof RemoteCallError)) return e as StatusError;
  const m = e.message;
  switch (e.code) {
    case grpc.status.NOT_FOUND:
      return new NotFoundError(m);
    case grpc.status.INVALID_ARGUMENT:
      return new InvalidArgumentError(m);
    case grpc.status.RESOURCE_EXHAUSTED:
      return new ResourceExhaustedError(m, e.retryDelayMs);
    case grpc.status.FAILED_PRECONDITION:
      return new FailedPreconditionError(
        m,
        e.missingBlobs.map((d) => ({ type: 'MISSING', subject: `blobs/${d.hash}/${d.sizeBytes}`, description: 'missing on the storage node' })),
      );
    case grpc.status.OUT_OF_RANGE:
      return new OutOfRangeError(m);
    case grpc.status.UNAVAILABLE:
      return new UnavailableError(m);
    case grpc.status.UNAUTHENTICATED:
    case grpc.status.PERMISSION_DENIED:
      return new InternalError(`the storage node refused this server's credentials: ${m}`);
    default:
      return new PassedOnStatusError(m, e.code as number as googleRpc.Code);
  }
}
