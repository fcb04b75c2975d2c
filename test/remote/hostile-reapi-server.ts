import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { bytestream, digestKey, digestOf, googleRpc, type longrunning, packAny, reapi, type Digest } from '../../src/core/index.js';

/**
 * A REAPI server for tests that a test can make misbehave, one method at a time: answer what the
 * test says, stall forever, stall or fail after N bytes, fail with a status and RetryInfo, break a
 * stream mid-way. Methods the test does not script behave correctly over an in-memory CAS and action
 * cache (Execute answers from `executeResults`, else from the action cache). Listens on 127.0.0.1:0;
 * `close()` cancels every call still open (stalled ones included) and leaves no handle behind.
 */

export type HostileMethod =
  | 'GetCapabilities'
  | 'GetActionResult'
  | 'UpdateActionResult'
  | 'FindMissingBlobs'
  | 'BatchUpdateBlobs'
  | 'BatchReadBlobs'
  | 'Read'
  | 'Write'
  | 'QueryWriteStatus'
  | 'Execute'
  | 'WaitExecution';

/** A status to fail with; `retryDelayMs` adds a `google.rpc.RetryInfo`. */
export interface ScriptedStatus {
  readonly code: grpc.status;
  readonly message?: string;
  readonly retryDelayMs?: number;
}

/** How a stream ends after what it sent: normally, never (stalls), or with a status. */
export type StreamEnd = 'end' | 'stall' | ScriptedStatus;

export type Behaviour =
  /** As a correct server would (the default for anything unscripted). */
  | { readonly kind: 'default' }
  /** Never answer (until the client gives up or the server closes). */
  | { readonly kind: 'stall' }
  | ({ readonly kind: 'fail' } & ScriptedStatus)
  /** A unary method answers this message. */
  | { readonly kind: 'answer'; readonly response: object }
  /** Read: these bytes instead of the blob (an iterable, so that gigabytes can be generated lazily), then `then`. */
  | { readonly kind: 'stream'; readonly chunks: Iterable<Buffer>; readonly then?: StreamEnd }
  /**
   * Read: the first `bytes` bytes of the stored blob (from the requested offset), then `then`.
   * Write: accepts (and commits, for QueryWriteStatus) the first `bytes` bytes, then `then`.
   */
  | { readonly kind: 'partial'; readonly bytes: number; readonly then: StreamEnd }
  /** Execute / WaitExecution: these operations, then `then`. */
  | { readonly kind: 'operations'; readonly operations: readonly longrunning.OperationInit[]; readonly then: StreamEnd };

/** A method's script: behaviours by call number (the default once they run out), or a function of the call number and request. */
export type Script = readonly Behaviour[] | ((call: number, request: unknown) => Behaviour | undefined);

export interface HostileReapiServer {
  /** `grpc://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The in-memory CAS, by digest key. */
  readonly cas: Map<string, Buffer>;
  /** The action cache, by action digest key. */
  readonly actionCache: Map<string, reapi.ActionResultInit>;
  /** What the default Execute answers for an action digest key (before the action cache). */
  readonly executeResults: Map<string, reapi.ActionResultInit>;
  /** The requests each method received, in order (a Write's first message, without its data). */
  readonly requests: { readonly [M in HostileMethod]: unknown[] };
  /** The default capabilities (exec enabled, SHA256, no compression); `capabilities` replaces them. */
  capabilities: reapi.ServerCapabilitiesInit;
  script(method: HostileMethod, script: Script): void;
  /** Resolves once `method` has received `count` calls in all. */
  called(method: HostileMethod, count?: number): Promise<void>;
  /** Stores `data` in the CAS; its digest. */
  put(data: Buffer | string): Digest;
  close(): Promise<void>;
}

const CHUNK_BYTES = 64 * 1024;
const METHODS: readonly HostileMethod[] = [
  'GetCapabilities',
  'GetActionResult',
  'UpdateActionResult',
  'FindMissingBlobs',
  'BatchUpdateBlobs',
  'BatchReadBlobs',
  'Read',
  'Write',
  'QueryWriteStatus',
  'Execute',
  'WaitExecution',
];

export async function startHostileReapiServer(): Promise<HostileReapiServer> {
  const cas = new Map<string, Buffer>();
  const actionCache = new Map<string, reapi.ActionResultInit>();
  const executeResults = new Map<string, reapi.ActionResultInit>();
  const scripts = new Map<HostileMethod, Script>();
  const counts = new Map<HostileMethod, number>();
  const requests = Object.fromEntries(METHODS.map((m) => [m, []])) as unknown as { [M in HostileMethod]: unknown[] };
  /** Bytes committed per upload resource name (for QueryWriteStatus). */
  const uploads = new Map<string, Buffer[]>();
  /** Finished results of operations, for WaitExecution. */
  const operations = new Map<string, reapi.ExecuteResponseInit>();

  const waiters: { method: HostileMethod; count: number; resolve: () => void }[] = [];
  const behaviour = (method: HostileMethod, request: unknown): Behaviour => {
    const n = counts.get(method) ?? 0;
    counts.set(method, n + 1);
    requests[method].push(request);
    for (const w of waiters.filter((w) => w.method === method && w.count <= n + 1)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const script = scripts.get(method);
    const chosen = typeof script === 'function' ? script(n, request) : script?.[n];
    return chosen ?? { kind: 'default' };
  };

  /** A unary handler: scripted failure, stall or answer, else `correct`. */
  const unary =
    <Req>(method: HostileMethod, correct: (request: Req) => object) =>
    (call: grpc.ServerUnaryCall<Req, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const b = behaviour(method, call.request);
      switch (b.kind) {
        case 'stall':
          return;
        case 'fail':
          return callback(serviceError(b));
        case 'answer':
          return callback(null, b.response);
        default:
          try {
            return callback(null, correct(call.request));
          } catch (e) {
            return callback(e instanceof StatusFailure ? serviceError(e.status) : serviceError({ code: grpc.status.INTERNAL, message: String(e) }));
          }
      }
    };

  const server = new grpc.Server();
  const self: HostileReapiServer = {
    url: '',
    port: 0,
    cas,
    actionCache,
    executeResults,
    requests,
    capabilities: {
      cacheCapabilities: {
        digestFunctions: [reapi.DigestFunction_Value.SHA256],
        maxBatchTotalSizeBytes: 4 * 1024 * 1024,
        actionCacheUpdateCapabilities: { updateEnabled: true },
      },
      executionCapabilities: { execEnabled: true, digestFunction: reapi.DigestFunction_Value.SHA256, digestFunctions: [reapi.DigestFunction_Value.SHA256] },
    },
    script: (method, script) => void scripts.set(method, script),
    called: (method, count = 1) =>
      (counts.get(method) ?? 0) >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ method, count, resolve })),
    put: (data) => {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      const digest = digestOf(bytes);
      cas.set(digestKey(digest), bytes);
      return digest;
    },
    close: async () => {
      server.forceShutdown();
    },
  };

  server.addService(reapi.CapabilitiesService as unknown as grpc.ServiceDefinition, {
    GetCapabilities: unary('GetCapabilities', () => self.capabilities),
  });
  server.addService(reapi.ActionCacheService as unknown as grpc.ServiceDefinition, {
    GetActionResult: unary<reapi.GetActionResultRequest>('GetActionResult', (request) => {
      const result = request.actionDigest && actionCache.get(keyOf(request.actionDigest));
      if (!result) throw new StatusFailure({ code: grpc.status.NOT_FOUND, message: 'no such action result' });
      return result;
    }),
    UpdateActionResult: unary<reapi.UpdateActionResultRequest>('UpdateActionResult', (request) => {
      if (request.actionDigest && request.actionResult) actionCache.set(keyOf(request.actionDigest), request.actionResult);
      return request.actionResult ?? {};
    }),
  });
  server.addService(reapi.ContentAddressableStorageService as unknown as grpc.ServiceDefinition, {
    FindMissingBlobs: unary<reapi.FindMissingBlobsRequest>('FindMissingBlobs', (request) => ({
      missingBlobDigests: request.blobDigests.filter((d) => d.sizeBytes > 0 && !cas.has(keyOf(d))),
    })),
    BatchUpdateBlobs: unary<reapi.BatchUpdateBlobsRequest>('BatchUpdateBlobs', (request) => ({
      responses: request.requests.map((r) => {
        const data = Buffer.from(r.data);
        const ok = r.digest && digestKey(digestOf(data)) === keyOf(r.digest);
        if (ok) cas.set(keyOf(r.digest!), data);
        return { digest: r.digest, status: { code: ok ? 0 : grpc.status.INVALID_ARGUMENT, message: ok ? '' : 'digest mismatch' } };
      }),
    })),
    BatchReadBlobs: unary<reapi.BatchReadBlobsRequest>('BatchReadBlobs', (request) => ({
      responses: request.digests.map((digest) => {
        const data = cas.get(keyOf(digest));
        return { digest, data: data ?? Buffer.alloc(0), status: { code: data ? 0 : grpc.status.NOT_FOUND, message: data ? '' : 'not found' } };
      }),
    })),
  });
  server.addService(bytestream.ByteStreamService as unknown as grpc.ServiceDefinition, {
    Read: (call: grpc.ServerWritableStream<bytestream.ReadRequest, unknown>) => {
      const b = behaviour('Read', call.request);
      if (b.kind === 'stall') return;
      if (b.kind === 'fail') return void call.emit('error', serviceError(b));
      const stored = cas.get(readKey(call.request.resourceName));
      if (b.kind === 'stream') return void streamChunks(call, b.chunks, b.then ?? 'end');
      if (!stored) return void call.emit('error', serviceError({ code: grpc.status.NOT_FOUND, message: 'not found' }));
      const from = stored.subarray(call.request.readOffset);
      if (b.kind === 'partial') return void streamChunks(call, chunksOf(from.subarray(0, b.bytes)), b.then);
      void streamChunks(call, chunksOf(from), 'end');
    },
    Write: (call: grpc.ServerReadableStream<bytestream.WriteRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      let b: Behaviour | undefined;
      let resourceName = '';
      let limit = Infinity;
      let ended = false;
      call.on('data', (request: bytestream.WriteRequest) => {
        if (ended) return;
        if (!b) {
          resourceName = request.resourceName;
          b = behaviour('Write', { resourceName: request.resourceName, writeOffset: request.writeOffset });
          if (b.kind === 'stall') return void (ended = true);
          if (b.kind === 'fail') return void ((ended = true), callback(serviceError(b)));
          if (b.kind === 'partial') limit = b.bytes;
          // A write at offset 0 starts over; elsewhere it continues what was committed.
          if (request.writeOffset === 0) uploads.set(resourceName, []);
        }
        const parts = uploads.get(resourceName) ?? [];
        uploads.set(resourceName, parts);
        const committed = parts.reduce((n, p) => n + p.length, 0);
        const room = Math.max(0, limit - committed);
        parts.push(Buffer.from(request.data).subarray(0, room));
        if (request.data.length > room) {
          ended = true;
          const then = (b as { then: StreamEnd }).then;
          if (then !== 'stall') callback(then === 'end' ? null : serviceError(then), then === 'end' ? { committedSize: limit } : undefined);
          return;
        }
        if (request.finishWrite) {
          ended = true;
          const data = Buffer.concat(uploads.get(resourceName) ?? []);
          const key = uploadKey(resourceName);
          if (digestKey(digestOf(data)) !== key) return callback(serviceError({ code: grpc.status.INVALID_ARGUMENT, message: 'digest mismatch' }));
          cas.set(key, data);
          callback(null, { committedSize: data.length });
        }
      });
    },
    QueryWriteStatus: unary<bytestream.QueryWriteStatusRequest>('QueryWriteStatus', (request) => {
      if (cas.has(uploadKey(request.resourceName))) return { committedSize: cas.get(uploadKey(request.resourceName))!.length, complete: true };
      const parts = uploads.get(request.resourceName);
      if (!parts) throw new StatusFailure({ code: grpc.status.NOT_FOUND, message: 'no such upload' });
      return { committedSize: parts.reduce((n, p) => n + p.length, 0), complete: false };
    }),
  });
  const execute = (method: 'Execute' | 'WaitExecution') => (call: grpc.ServerWritableStream<reapi.ExecuteRequest | reapi.WaitExecutionRequest, unknown>) => {
    const b = behaviour(method, call.request);
    if (b.kind === 'stall') return;
    if (b.kind === 'fail') return void call.emit('error', serviceError(b));
    if (b.kind === 'operations') {
      for (const op of b.operations) call.write(op);
      return finish(call, b.then);
    }
    let name: string;
    let response: reapi.ExecuteResponseInit | undefined;
    if (method === 'WaitExecution') {
      name = (call.request as reapi.WaitExecutionRequest).name;
      response = operations.get(name);
      if (!response) return void call.emit('error', serviceError({ code: grpc.status.NOT_FOUND, message: `operation ${name.slice(0, 100)} is not known` }));
    } else {
      const digest = (call.request as reapi.ExecuteRequest).actionDigest;
      const key = digest ? keyOf(digest) : '';
      name = `operations/${randomUUID()}`;
      const result = executeResults.get(key) ?? actionCache.get(key);
      response = result
        ? { result, status: { code: 0, message: '' } }
        : { status: { code: grpc.status.FAILED_PRECONDITION, message: `no result scripted for action ${key}` } };
      operations.set(name, response);
      call.write({ name, done: false });
    }
    call.write({ name, done: true, response: packAny(reapi.ExecuteResponse, response) });
    call.end();
  };
  server.addService(reapi.ExecutionService as unknown as grpc.ServiceDefinition, { Execute: execute('Execute'), WaitExecution: execute('WaitExecution') });

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return Object.assign(self, { port, url: `grpc://127.0.0.1:${port}` });
}

/** A scripted status as grpc-js sends it: the code, the message, and RetryInfo in `grpc-status-details-bin`. */
function serviceError(status: ScriptedStatus): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  const message = status.message ?? `scripted ${grpc.status[status.code]}`;
  if (status.retryDelayMs !== undefined) {
    const retryDelay = { seconds: Math.floor(status.retryDelayMs / 1000), nanos: (status.retryDelayMs % 1000) * 1e6 };
    const details = googleRpc.Status.encode({ code: status.code, message, details: [packAny(googleRpc.RetryInfo, { retryDelay })] });
    metadata.set('grpc-status-details-bin', Buffer.from(details));
  }
  return { code: status.code, details: message, metadata };
}

class StatusFailure extends Error {
  constructor(readonly status: ScriptedStatus) {
    super(status.message);
  }
}

function keyOf(digest: reapi.Digest): string {
  return `${digest.hash}/${digest.sizeBytes}`;
}

/** `.../blobs/{hash}/{size}` of a read resource name. */
function readKey(resourceName: string): string {
  return resourceName.split('/').slice(-2).join('/');
}

/** `.../uploads/{uuid}/blobs/{hash}/{size}[/...]` of a write resource name. */
function uploadKey(resourceName: string): string {
  const segments = resourceName.split('/');
  const at = segments.lastIndexOf('blobs');
  return segments.slice(at + 1, at + 3).join('/');
}

function* chunksOf(data: Buffer): Generator<Buffer> {
  for (let at = 0; at < data.length; at += CHUNK_BYTES) yield data.subarray(at, at + CHUNK_BYTES);
}

/** Writes `chunks` with backpressure (a lazily generated stream never piles up), stopping when the client cancels, then ends as `then` says. */
async function streamChunks(call: grpc.ServerWritableStream<unknown, unknown>, chunks: Iterable<Buffer>, then: StreamEnd): Promise<void> {
  let cancelled = false;
  call.on('cancelled', () => (cancelled = true));
  for (const data of chunks) {
    if (cancelled) return;
    if (!call.write({ data })) {
      await new Promise<void>((resolve) => {
        call.once('drain', resolve);
        call.once('cancelled', resolve);
        call.once('close', resolve);
      });
    }
  }
  if (!cancelled) finish(call, then);
}

function finish(call: grpc.ServerWritableStream<unknown, unknown>, then: StreamEnd): void {
  if (then === 'stall') return;
  if (then === 'end') return void call.end();
  call.emit('error', serviceError(then));
}

/** Zero bytes, `total` of them, generated as they are sent. */
export function* zeros(total: number, chunkBytes = 1024 * 1024): Generator<Buffer> {
  const chunk = Buffer.alloc(chunkBytes);
  for (let sent = 0; sent < total; sent += chunkBytes) yield chunk.subarray(0, Math.min(chunkBytes, total - sent));
}
