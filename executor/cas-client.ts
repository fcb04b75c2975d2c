import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { bytestream, digestKey, googleRpc, InternalError, NotFoundError, reapi, UnavailableError, type Digest } from '../src/core/index.js';
import type { SchedulerChannel } from './scheduler-connection.js';

/** Blobs up to this size travel in batch RPCs; larger ones through ByteStream. */
const BATCH_BLOB_LIMIT = 1024 * 1024;
/** Total payload of one batch request, well under the server's 4 MiB default. */
const BATCH_BYTES = 3 * 1024 * 1024;
const WRITE_CHUNK = 1024 * 1024;
/** Up to this many bytes in all, blobs are uploaded without FindMissingBlobs first. */
const SEND_WITHOUT_ASKING_BYTES = 64 * 1024;

/** Calls a unary method of a generated client as a promise. */
export function unary<Res>(client: grpc.Client, method: unknown, request: unknown): Promise<Res> {
  return new Promise((resolve, reject) => {
    (method as (req: unknown, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown).call(
      client,
      request,
      (err: grpc.ServiceError | null, res?: Res) => (err ? reject(fromServiceError(err)) : resolve(res as Res)),
    );
  });
}

function fromServiceError(err: grpc.ServiceError): Error {
  if (err.code === grpc.status.NOT_FOUND) return new NotFoundError(err.details);
  if (err.code === grpc.status.UNAVAILABLE) return new UnavailableError(err.details);
  return new InternalError(`${grpc.status[err.code] ?? err.code}: ${err.details}`);
}

/** The executor's view of the scheduler's CAS: what it reads and writes, over one channel. */
export class CasClient {
  private readonly cas: reapi.ContentAddressableStorageClient;
  private readonly bs: bytestream.ByteStreamClient;

  constructor(
    channel: SchedulerChannel,
    private readonly instanceName: string,
    channelOptions: grpc.ChannelOptions = {},
  ) {
    const options = { 'grpc.max_receive_message_length': 16 * 1024 * 1024, ...channel.options, ...channelOptions };
    const Cas = grpc.makeGenericClientConstructor(reapi.ContentAddressableStorageService as unknown as grpc.ServiceDefinition, 'ContentAddressableStorage');
    const Bs = grpc.makeGenericClientConstructor(bytestream.ByteStreamService as unknown as grpc.ServiceDefinition, 'ByteStream');
    this.cas = new Cas(channel.address, channel.credentials, options) as unknown as reapi.ContentAddressableStorageClient;
    this.bs = new Bs(channel.address, channel.credentials, options) as unknown as bytestream.ByteStreamClient;
  }

  close(): void {
    this.cas.close();
    this.bs.close();
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const out: Digest[] = [];
    for (let i = 0; i < digests.length; i += 10_000) {
      const res = await unary<reapi.FindMissingBlobsResponse>(this.cas, this.cas.FindMissingBlobs, {
        instanceName: this.instanceName,
        blobDigests: digests.slice(i, i + 10_000),
      });
      for (const d of res.missingBlobDigests) out.push({ hash: d.hash, sizeBytes: d.sizeBytes });
    }
    return out;
  }

  /** Reads several small blobs; NotFoundError names the first missing one. */
  async getMany(digests: readonly Digest[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const large = digests.filter((d) => d.sizeBytes > BATCH_BLOB_LIMIT);
    for (const d of large) out.set(digestKey(d), await this.get(d));
    let batch: Digest[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const res = await unary<reapi.BatchReadBlobsResponse>(this.cas, this.cas.BatchReadBlobs, { instanceName: this.instanceName, digests: batch });
      for (const r of res.responses) {
        const code = r.status?.code ?? googleRpc.Code.OK;
        if (code === googleRpc.Code.NOT_FOUND) throw new NotFoundError(`blob ${r.digest?.hash}/${r.digest?.sizeBytes} is not in the CAS`);
        if (code !== googleRpc.Code.OK) throw new InternalError(`reading blob ${r.digest?.hash}: ${r.status?.message}`);
        out.set(`${r.digest!.hash}/${r.digest!.sizeBytes}`, r.data);
      }
      batch = [];
      bytes = 0;
    };
    for (const d of digests) {
      if (d.sizeBytes > BATCH_BLOB_LIMIT || out.has(digestKey(d))) continue;
      if (d.sizeBytes === 0) {
        out.set(digestKey(d), Buffer.alloc(0));
        continue;
      }
      if (bytes + d.sizeBytes > BATCH_BYTES) await flush();
      batch.push(d);
      bytes += d.sizeBytes;
    }
    await flush();
    return out;
  }

  async get(digest: Digest): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.read(digest)) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  /** Streams a blob into a new file at `path`. */
  async download(digest: Digest, path: string): Promise<void> {
    const out = createWriteStream(path, { flags: 'wx' });
    try {
      if (digest.sizeBytes > 0 && digest.sizeBytes <= BATCH_BLOB_LIMIT) {
        const data = (await this.getMany([digest])).get(digestKey(digest))!;
        out.write(data);
      } else {
        for await (const chunk of this.read(digest)) if (!out.write(chunk)) await once(out, 'drain');
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
  }

  private async *read(digest: Digest): AsyncIterable<Buffer> {
    if (digest.sizeBytes === 0) return;
    const prefix = this.instanceName === '' ? '' : `${this.instanceName}/`;
    const call = this.bs.Read({ resourceName: `${prefix}blobs/${digest.hash}/${digest.sizeBytes}` });
    try {
      for await (const res of call as AsyncIterable<bytestream.ReadResponse>) yield res.data;
    } catch (e) {
      throw fromServiceError(e as grpc.ServiceError);
    }
  }

  /** Uploads the blobs the CAS lacks; `load` supplies a blob's bytes when it must be sent. */
  async uploadMissing(digests: readonly Digest[], load: (digest: Digest) => Promise<Buffer>): Promise<void> {
    const unique = [...new Map(digests.filter((d) => d.sizeBytes > 0).map((d) => [digestKey(d), d])).values()];
    if (unique.length === 0) return;
    // Asking first costs a round trip; for a few small blobs sending them outright is cheaper.
    const total = unique.reduce((sum, d) => sum + d.sizeBytes, 0);
    const missing = total <= SEND_WITHOUT_ASKING_BYTES ? unique : await this.findMissing(unique);
    let batch: reapi.BatchUpdateBlobsRequest_RequestInit[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const res = await unary<reapi.BatchUpdateBlobsResponse>(this.cas, this.cas.BatchUpdateBlobs, { instanceName: this.instanceName, requests: batch });
      for (const r of res.responses) {
        if ((r.status?.code ?? 0) !== googleRpc.Code.OK) throw new InternalError(`uploading blob ${r.digest?.hash}: ${r.status?.message}`);
      }
      batch = [];
      bytes = 0;
    };
    for (const d of missing) {
      const data = await load(d);
      if (d.sizeBytes > BATCH_BLOB_LIMIT) {
        await this.write(d, data);
        continue;
      }
      if (bytes + d.sizeBytes > BATCH_BYTES) await flush();
      batch.push({ digest: d, data });
      bytes += d.sizeBytes;
    }
    await flush();
  }

  private write(digest: Digest, data: Buffer): Promise<void> {
    const prefix = this.instanceName === '' ? '' : `${this.instanceName}/`;
    const resourceName = `${prefix}uploads/${randomUUID()}/blobs/${digest.hash}/${digest.sizeBytes}`;
    return new Promise((resolve, reject) => {
      const call = this.bs.Write((err: grpc.ServiceError | null) => (err ? reject(fromServiceError(err)) : resolve()));
      for (let offset = 0; offset < data.length; offset += WRITE_CHUNK) {
        const end = Math.min(data.length, offset + WRITE_CHUNK);
        call.write({ resourceName: offset === 0 ? resourceName : '', writeOffset: offset, finishWrite: end === data.length, data: data.subarray(offset, end) });
      }
      call.end();
    });
  }
}
