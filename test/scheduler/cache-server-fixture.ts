import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytestream, digestOf, googleRpc, reapi, unpackAny, type Digest } from '../../src/core/index.js';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';

export interface TestBlob {
  digest: Digest;
  data: Buffer;
}

/** A blob with its real digest. */
export function blob(content: string | Buffer): TestBlob {
  const data = typeof content === 'string' ? Buffer.from(content) : content;
  return { digest: digestOf(data), data };
}

/** Deterministic pseudo-random bytes (xorshift), so content-defined chunking has something to cut. */
export function randomBytes(size: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

export interface Clients {
  cas: reapi.ContentAddressableStorageClient;
  ac: reapi.ActionCacheClient;
  bs: bytestream.ByteStreamClient;
  caps: reapi.CapabilitiesClient;
  close(): void;
}

/** Clients of `endpoint`, plain unless `credentials` say TLS. */
export function connect(endpoint: string, credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure()): Clients {
  const address = endpoint.replace(/^grpcs?:\/\//, '');
  const options = { 'grpc.max_receive_message_length': 64 * 1024 * 1024 };
  const make = <T>(definition: object, name: string): T => {
    const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, name);
    return new Ctor(address, credentials, options) as unknown as T;
  };
  const clients = {
    cas: make<reapi.ContentAddressableStorageClient>(reapi.ContentAddressableStorageService, 'ContentAddressableStorage'),
    ac: make<reapi.ActionCacheClient>(reapi.ActionCacheService, 'ActionCache'),
    bs: make<bytestream.ByteStreamClient>(bytestream.ByteStreamService, 'ByteStream'),
    caps: make<reapi.CapabilitiesClient>(reapi.CapabilitiesService, 'Capabilities'),
  };
  return { ...clients, close: () => Object.values(clients).forEach((c) => (c as grpc.Client).close()) };
}

export interface TestServer extends Clients {
  server: CacheServer;
  /** Present when the server stores on disk. */
  storageDir?: string;
  stop(): Promise<void>;
}

/**
 * Starts a cache server on an ephemeral loopback port. `config` is the JSON config file's shape;
 * `disk: true` stores in a fresh temp dir (removed by stop()) unless `storageDir` is given.
 */
export async function startTestServer(
  options: { config?: Record<string, unknown>; disk?: boolean; storageDir?: string; storageKind?: 'disk' | 'blocks' } = {},
): Promise<TestServer> {
  let tempDir: string | undefined;
  let storageDir = options.storageDir;
  if (options.disk && !storageDir) {
    tempDir = await mkdtemp(join(tmpdir(), 'kiln-cache-test-'));
    storageDir = tempDir;
  }
  // On disk, one file per blob unless `storageKind` says 'blocks' (tests look at the files).
  const storage = storageDir ? { storage: { kind: options.storageKind ?? 'disk', path: storageDir } } : {};
  const config = parseCacheServerConfig({ ...storage, ...options.config }, 'test config', process.cwd(), {
    host: '127.0.0.1',
    port: 0,
  });
  const log = { info: () => undefined, warn: () => undefined };
  const server = await startCacheServer(config, { log });
  const clients = connect(server.endpoint);
  return {
    ...clients,
    server,
    ...(storageDir ? { storageDir } : {}),
    stop: async () => {
      clients.close();
      await server.close();
      if (tempDir) await rm(tempDir, { recursive: true, force: true });
    },
  };
}

/** The outcome of a gRPC call: its response or its error status. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; code: grpc.status; message: string; metadata: grpc.Metadata };

/**
 * A generated client's unary method. Written as its last overload (request, metadata, options,
 * callback) because that is the one TypeScript infers from; it is called with (request, callback).
 */
type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** Calls a unary method and resolves with its outcome (never rejects). */
export function call<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, request: Req): Promise<Outcome<Res>> {
  return new Promise((resolve) => {
    const invoke = method as unknown as (this: grpc.Client, r: Req, cb: grpc.requestCallback<Res>) => unknown;
    invoke.call(client, request, (err, value) => {
      if (err) resolve({ ok: false, code: err.code, message: err.details, metadata: err.metadata });
      else resolve({ ok: true, value: value! });
    });
  });
}

/** Like `call` but rejects on error: for the steps of a test that must succeed. */
export async function must<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, request: Req): Promise<Res> {
  const outcome = await call(client, method, request);
  if (!outcome.ok) throw new Error(`${method.name} failed: ${grpc.status[outcome.code]}: ${outcome.message}`);
  return outcome.value;
}

/** The google.rpc.Status details a failed call carried in grpc-status-details-bin. */
export function statusDetails(metadata: grpc.Metadata): googleRpc.Status | undefined {
  const raw = metadata.get('grpc-status-details-bin')[0];
  return raw ? googleRpc.Status.decode(raw as Buffer) : undefined;
}

export function retryInfo(metadata: grpc.Metadata): googleRpc.RetryInfo | undefined {
  const details = statusDetails(metadata)?.details ?? [];
  for (const any of details) {
    const info = unpackAny(googleRpc.RetryInfo, any);
    if (info) return info;
  }
  return undefined;
}

export function preconditionFailure(metadata: grpc.Metadata): googleRpc.PreconditionFailure | undefined {
  const details = statusDetails(metadata)?.details ?? [];
  for (const any of details) {
    const info = unpackAny(googleRpc.PreconditionFailure, any);
    if (info) return info;
  }
  return undefined;
}

/** Reads a whole ByteStream resource; resolves with the bytes or the error status. */
export function readStream(bs: bytestream.ByteStreamClient, request: bytestream.ReadRequestInit): Promise<Outcome<Buffer>> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const stream = bs.Read(request);
    stream.on('data', (r: bytestream.ReadResponse) => parts.push(Buffer.from(r.data)));
    stream.on('error', (err: grpc.ServiceError) => resolve({ ok: false, code: err.code, message: err.details, metadata: err.metadata }));
    stream.on('end', () => resolve({ ok: true, value: Buffer.concat(parts) }));
  });
}

/** Writes messages on one Write stream and resolves with the outcome. */
export function writeStream(bs: bytestream.ByteStreamClient, requests: bytestream.WriteRequestInit[]): Promise<Outcome<bytestream.WriteResponse>> {
  return new Promise((resolve) => {
    const stream = bs.Write((err, value) => {
      if (err) resolve({ ok: false, code: err.code, message: err.details, metadata: err.metadata });
      else resolve({ ok: true, value: value! });
    });
    for (const r of requests) stream.write(r);
    stream.end();
  });
}

/** The messages of a whole-blob upload in chunks of `chunkSize`. */
export function uploadRequests(resourceName: string, data: Buffer, chunkSize = 64 * 1024, startOffset = 0): bytestream.WriteRequestInit[] {
  const requests: bytestream.WriteRequestInit[] = [];
  for (let offset = startOffset; offset < data.length || requests.length === 0; offset += chunkSize) {
    const end = Math.min(data.length, offset + chunkSize);
    requests.push({
      resourceName: requests.length === 0 ? resourceName : '',
      writeOffset: offset,
      data: data.subarray(offset, end),
      finishWrite: end >= data.length,
    });
  }
  return requests;
}

export function uploadName(digest: Digest, uuid = '1f0c3c9e-5d1a-4d8a-9a53-3b1b2f6a0c11', instance = ''): string {
  return `${instance ? `${instance}/` : ''}uploads/${uuid}/blobs/${digest.hash}/${digest.sizeBytes}`;
}

export function blobName(digest: Digest, instance = ''): string {
  return `${instance ? `${instance}/` : ''}blobs/${digest.hash}/${digest.sizeBytes}`;
}

export { grpc };
