import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { digestKey, type Digest } from '../src/core/index.js';
import { parseRemoteEndpoint, RemoteClient } from '../src/remote/index.js';
import type { SchedulerCredentials } from './scheduler-connection.js';

/** Bazel's default --remote_timeout: the deadline of a unary call, the longest silence on a stream. */
const CALL_TIMEOUT_MS = 60_000;
/** Bazel's default --remote_retries. */
const RETRIES = 5;
/** Up to this many bytes in all, an action's outputs are sent without asking FindMissingBlobs first. */
const SEND_WITHOUT_ASKING_BYTES = 64 * 1024;

export interface CasClientOptions {
  /** The scheduler: `grpcs://host:port` (TLS), `grpc://host:port` or a bare `host:port` (plain), as the worker protocol reads it. */
  readonly scheduler: string;
  readonly instanceName: string;
  readonly credentials?: SchedulerCredentials | undefined;
  /** Names the executor in RequestMetadata, so the server's logs say who read and wrote. */
  readonly workerName?: string;
  readonly toolVersion?: string;
  /** The deadline of a unary call and the longest silence on a stream; Bazel's default --remote_timeout (60 s) when absent. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed with a retryable code; Bazel's default --remote_retries (5) when absent. */
  readonly retries?: number;
}

/** The CAS an executor reads inputs from and writes outputs to: the scheduler's (CasClient) or the storage's own (StorageCas). */
export interface ExecutorCas {
  /** Reads several blobs; a missing one fails the whole with NOT_FOUND naming it. */
  getMany(digests: readonly Digest[]): Promise<Map<string, Buffer>>;
  get(digest: Digest): Promise<Buffer>;
  /** Streams a blob into a new file at `path` (created exclusively), checked against its digest. */
  download(digest: Digest, path: string): Promise<void>;
  /** Uploads the blobs the CAS lacks; `load` supplies a blob's bytes when it must be sent. */
  uploadMissing(digests: readonly Digest[], load: (digest: Digest) => Promise<Buffer>): Promise<void>;
  close(): void;
}

/**
 * The executor's view of the scheduler's CAS, through Kiln's one REAPI client (src/remote): limits
 * from GetCapabilities, small reads batched, large blobs streamed to their files and checked against
 * their digests as they come, every call with a deadline and retried, gRPC codes passed through
 * (a missing blob is NOT_FOUND). The executor runs for days, so the client remembers no upload: the
 * CAS may have evicted since what it sent an hour ago, and FindMissingBlobs is asked each time.
 */
export class CasClient implements ExecutorCas {
  private readonly client: RemoteClient;

  constructor(options: CasClientOptions) {
    const credentials = options.credentials ?? {};
    // The worker protocol's reading of the URL: without a scheme, plain text (Bazel's flags read it as TLS).
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(options.scheduler) ? options.scheduler : `grpc://${options.scheduler}`;
    const id = randomUUID();
    this.client = new RemoteClient({
      cache: parseRemoteEndpoint(url, 'scheduler'),
      instanceName: options.instanceName,
      timeoutMs: options.timeoutMs ?? CALL_TIMEOUT_MS,
      retries: options.retries ?? RETRIES,
      rememberUploads: false,
      sendWithoutAskingBytes: SEND_WITHOUT_ASKING_BYTES,
      tls: {
        ...(credentials.tlsCa !== undefined ? { certificate: credentials.tlsCa } : {}),
        ...(credentials.tlsCertificate !== undefined ? { clientCertificate: credentials.tlsCertificate } : {}),
        ...(credentials.tlsKey !== undefined ? { clientKey: credentials.tlsKey } : {}),
      },
      headers: { common: credentials.token ? [['authorization', `Bearer ${credentials.token}`]] : [] },
      identity: {
        toolName: `kiln-executor${options.workerName ? ` ${options.workerName}` : ''}`,
        toolVersion: options.toolVersion ?? '',
        invocationId: id,
        buildRequestId: id,
      },
    });
  }

  close(): void {
    this.client.close();
  }

  /** Reads several blobs (small ones share BatchReadBlobs requests); a missing one fails the whole with NOT_FOUND naming it. */
  async getMany(digests: readonly Digest[]): Promise<Map<string, Buffer>> {
    const unique = [...new Map(digests.map((d) => [digestKey(d), d])).values()];
    const blobs = await Promise.all(unique.map((d) => this.client.read(d)));
    return new Map(unique.map((d, i) => [digestKey(d), blobs[i]!]));
  }

  get(digest: Digest): Promise<Buffer> {
    return this.client.read(digest);
  }

  /** Streams a blob into a new file at `path` (created exclusively), checked against its digest. */
  async download(digest: Digest, path: string): Promise<void> {
    const file = await open(path, 'wx');
    try {
      await this.client.readToFile(digest, file);
    } finally {
      await file.close();
    }
  }

  /** Uploads the blobs the CAS lacks; `load` supplies a blob's bytes when it must be sent. */
  uploadMissing(digests: readonly Digest[], load: (digest: Digest) => Promise<Buffer>): Promise<void> {
    return this.client.uploadMissing(digests.map((digest) => ({ digest, data: () => load(digest) })));
  }
}
