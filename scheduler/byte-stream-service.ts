import type * as grpc from '@grpc/grpc-js';
import { bytestream, InvalidArgumentError, isEmptyDigest, OutOfRangeError, reapi, ZstdCompressor, ZstdDecompressor } from '../src/core/index.js';
import { checkBlobSize } from './content-addressable-storage-service.js';
import { toServiceError, withContext } from './grpc-status.js';
import type { Admission } from './in-flight-limiter.js';
import { quotedName } from './instance-name.js';
import { parseReadResourceName, parseWriteResourceName, type UploadResourceName } from './resource-name.js';
import { reportUnexpected, unaryHandler, type ServiceContext } from './service-context.js';
import type { UploadSessions, UploadSession } from './upload-sessions.js';

/**
 * ReadResponse (one bytes field, `data = 10`) as protobuf encodes it, written straight: one buffer of
 * the exact size and one copy of the data. The generic encoder spends as much again per MiB on its
 * operation list and buffer growth, and a large read is a stream of 1 MiB responses.
 */
export function serializeReadResponse(response: bytestream.ReadResponseInit): Buffer {
  const data = response.data;
  if (!data || data.length === 0) return Buffer.alloc(0);
  let header = 2;
  for (let n = data.length; n >= 0x80; n = Math.floor(n / 0x80)) header++;
  const out = Buffer.allocUnsafe(header + data.length);
  out[0] = 0x52; // field 10, length-delimited
  let pos = 1;
  let n = data.length;
  while (n >= 0x80) {
    out[pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[pos++] = n;
  out.set(data, pos);
  return out;
}

/** The ByteStream service definition the server registers: the generated one, with ReadResponse written by serializeReadResponse. */
export const byteStreamDefinition = {
  ...bytestream.ByteStreamService,
  Read: { ...bytestream.ByteStreamService.Read, responseSerialize: serializeReadResponse },
};

/** google.bytestream.ByteStream over each instance's CAS: streamed reads, resumable verified writes. */
export function byteStreamService(ctx: ServiceContext, sessions: UploadSessions): bytestream.ByteStreamServer {
  return {
    Read: (call) => void serveRead(ctx, call),
    Write: (call, callback) => new WriteStream(ctx, sessions, call, callback).start(),
    QueryWriteStatus: unaryHandler(
      ctx,
      'QueryWriteStatus',
      () => 0,
      async (request) => {
        const name = parseWriteResourceName(request.resourceName);
        const { cas } = ctx.instances.get(name.instanceName, 'resource_name');
        const session = sessions.get(name.uploadKey);
        if (session) {
          // A write already under way when a stream broke still counts: wait for it.
          await session.settled();
          // A compressed upload cannot resume mid-frame: it restarts from 0.
          const committedSize = name.compressor === reapi.Compressor_Value.IDENTITY ? session.committedBytes : 0;
          return { committedSize, complete: false };
        }
        const present = (await cas.findMissing([name.digest])).length === 0;
        return present ? { committedSize: name.digest.sizeBytes, complete: true } : { committedSize: 0, complete: false };
      },
    ),
  };
}

async function serveRead(ctx: ServiceContext, call: grpc.ServerWritableStream<bytestream.ReadRequest, bytestream.ReadResponseInit>): Promise<void> {
  const chunkSize = ctx.config.limits.byteStreamChunkBytes;
  let admission: Admission | undefined;
  try {
    admission = ctx.limiter.admit('Read', chunkSize);
    const request = call.request;
    const name = parseReadResourceName(request.resourceName);
    const { cas } = ctx.instances.get(name.instanceName, 'resource_name');
    const { digest } = name;
    if (request.readOffset < 0) throw new OutOfRangeError(`read_offset: must not be negative, got ${request.readOffset}`);
    if (request.readLimit < 0) throw new InvalidArgumentError(`read_limit: must not be negative, got ${request.readLimit}`);
    if (request.readOffset > digest.sizeBytes) {
      throw new OutOfRangeError(`read_offset: ${request.readOffset} is beyond the end of the blob (${digest.sizeBytes} bytes)`);
    }
    const compressed = name.compressor === reapi.Compressor_Value.ZSTD;
    if (compressed && request.readLimit !== 0) {
      throw new InvalidArgumentError('read_limit: must be 0 when reading compressed-blobs (REAPI)');
    }
    const cancelled = cancellation(call);
    const send = async (data: Buffer): Promise<void> => {
      if (data.length === 0 || call.cancelled) return;
      if (!call.write({ data })) await Promise.race([new Promise((resolve) => call.once('drain', resolve)), cancelled]);
    };
    const encoder = compressed ? new ZstdCompressor() : undefined;
    if (!isEmptyDigest(digest) && request.readOffset < digest.sizeBytes) {
      const blob = await cas.read(digest, { offset: request.readOffset, limit: request.readLimit, chunkSizeBytes: chunkSize });
      for await (const chunk of blob.chunks) {
        if (call.cancelled) return;
        if (encoder) for (const part of encoder.push(chunk)) await send(part);
        else await send(chunk);
      }
    }
    if (encoder) for (const part of encoder.finish()) await send(part);
    if (!call.cancelled) call.end();
  } catch (e) {
    if (!call.cancelled) call.emit('error', toServiceError(reportUnexpected(ctx, 'Read', withContext(e, 'Read'), call.metadata)));
  } finally {
    admission?.release();
  }
}

/** Resolves when the client goes away. */
function cancellation(call: { once(event: 'cancelled', listener: () => void): unknown; cancelled: boolean }): Promise<void> {
  return new Promise((resolve) => (call.cancelled ? resolve() : call.once('cancelled', () => resolve())));
}

/**
 * One Write stream. Messages are processed one at a time (the stream is paused meanwhile, so a fast
 * client cannot queue unbounded data). The first message names the upload; a session with that name
 * continues where it stopped. A blob that is already stored ends the stream at once with its full size.
 */
class WriteStream {
  private readonly id = Symbol('write stream');
  private name: UploadResourceName | undefined;
  private session: UploadSession | undefined;
  private decoder: ZstdDecompressor | undefined;
  /** The write_offset the next message must carry. */
  private expectedOffset = 0;
  private admission: Admission | undefined;
  private done = false;
  private busy: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ServiceContext,
    private readonly sessions: UploadSessions,
    private readonly call: grpc.ServerReadableStream<bytestream.WriteRequest, bytestream.WriteResponseInit>,
    private readonly callback: grpc.sendUnaryData<bytestream.WriteResponseInit>,
  ) {}

  start(): void {
    try {
      this.admission = this.ctx.limiter.admit('Write');
    } catch (e) {
      this.finish(e);
      return;
    }
    this.call.on('data', (request: bytestream.WriteRequest) => {
      this.call.pause();
      this.busy = this.busy
        .then(() => (this.done ? undefined : this.handle(request)))
        .then(
          () => {
            if (!this.done) this.call.resume();
          },
          (e: unknown) => this.finish(e),
        );
    });
    this.call.on('end', () => {
      this.busy = this.busy.then(() => {
        if (!this.done) {
          this.finish(new InvalidArgumentError('the stream ended without a message with finish_write set; the upload can be resumed'));
        }
      });
    });
    // A broken stream keeps its session for a resume; only the ownership is given up.
    this.call.on('cancelled', () => this.stop());
    this.call.on('error', () => this.stop());
  }

  private async handle(request: bytestream.WriteRequest): Promise<void> {
    if (!this.name) {
      if (await this.open(request)) return;
    } else if (request.resourceName !== '' && request.resourceName !== this.firstResourceName) {
      throw new InvalidArgumentError(`resource_name: changed within one stream (to ${quotedName(request.resourceName)})`);
    }
    if (request.writeOffset !== this.expectedOffset) {
      throw new InvalidArgumentError(`write_offset: expected ${this.expectedOffset}, got ${request.writeOffset}`);
    }
    const session = this.session!;
    const data = request.data;
    this.expectedOffset += data.length;
    if (data.length > 0) {
      this.admission?.resize(data.length);
      await this.contentStep(() =>
        session.run(this.id, this.sessions.clock.now(), async () => {
          if (this.decoder) for (const part of this.decoder.push(data)) await session.write(part);
          else await session.write(data);
        }),
      );
      this.admission?.resize(0);
    }
    if (request.finishWrite) {
      await this.contentStep(() =>
        session.run(this.id, this.sessions.clock.now(), async () => {
          this.decoder?.finish();
          await session.commit();
        }),
      );
      await this.sessions.close(session);
      this.finish(undefined, this.decoder ? this.expectedOffset : this.name!.digest.sizeBytes);
    }
  }

  private firstResourceName = '';
  /** Set when the uploaded content itself was rejected: the partial upload is then worthless. */
  private contentRejected = false;

  private async contentStep(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (e) {
      if (e instanceof InvalidArgumentError) this.contentRejected = true;
      throw e;
    }
  }

  /** Handles the first message; returns true when the stream is already answered (blob present). */
  private async open(request: bytestream.WriteRequest): Promise<boolean> {
    const name = parseWriteResourceName(request.resourceName);
    this.name = name;
    this.firstResourceName = request.resourceName;
    const { cas } = this.ctx.instances.get(name.instanceName, 'resource_name');
    checkBlobSize(name.digest, this.ctx.config.limits.maxCasBlobSizeBytes, 'resource_name');
    const compressed = name.compressor === reapi.Compressor_Value.ZSTD;
    if ((await cas.findMissing([name.digest])).length === 0) {
      // Already stored: the upload is complete whatever the client still has to send (REAPI: full
      // size for plain uploads, -1 for compressed ones).
      const existing = this.sessions.get(name.uploadKey);
      if (existing && !existing.owned) await this.sessions.close(existing);
      this.finish(undefined, compressed ? -1 : name.digest.sizeBytes);
      return true;
    }
    const session = this.sessions.open(name.uploadKey, name.digest, cas);
    session.takeOver(this.id);
    this.session = session;
    await session.run(this.id, this.sessions.clock.now(), async () => {
      if (compressed || request.writeOffset === 0) {
        if (compressed && request.writeOffset !== 0) {
          throw new InvalidArgumentError(`write_offset: a compressed upload restarts at 0 (QueryWriteStatus reports 0), got ${request.writeOffset}`);
        }
        await session.restart();
      } else if (request.writeOffset !== session.committedBytes) {
        throw new InvalidArgumentError(
          `write_offset: ${request.writeOffset} does not match the committed size ${session.committedBytes} (see QueryWriteStatus)`,
        );
      }
    });
    this.expectedOffset = request.writeOffset;
    if (compressed) this.decoder = new ZstdDecompressor(name.digest.sizeBytes, 'data (zstd)');
    return false;
  }

  /** The client went away: keep the session for a resume. */
  private stop(): void {
    if (this.done) return;
    this.done = true;
    this.session?.release(this.id);
    this.admission?.release();
  }

  private finish(error: unknown, committedSize = 0): void {
    if (this.done) return;
    this.done = true;
    this.admission?.release();
    const session = this.session;
    if (error === undefined) {
      session?.release(this.id);
      this.callback(null, { committedSize });
      return;
    }
    // A content error (wrong size or hash, bad zstd) makes the partial upload useless: drop it.
    // Other failures (overload, a takeover) leave it for a resume.
    session?.release(this.id);
    if (session && this.contentRejected) void this.sessions.close(session);
    this.callback(toServiceError(reportUnexpected(this.ctx, 'Write', withContext(error, 'Write'))));
  }
}
