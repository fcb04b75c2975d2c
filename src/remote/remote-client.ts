import * as grpc from '@grpc/grpc-js';
import type { FileHandle } from 'node:fs/promises';
import { digestKey, reapi, type Digest } from '../core/index.js';
import { BlobReadBatcher } from './blob-read-batcher.js';
import { writeFully } from './blob-to-file.js';
import type { EndpointCredentials as CredentialHeaders } from './credential-helper.js';
import { RemoteCallError } from './remote-call-error.js';
import { RemoteCas, casLimitsOf, type BlobSource, type CasLimits } from './remote-cas.js';
import { RemoteChannel, unaryCall } from './remote-channel.js';
import type { TlsFiles } from './remote-tls.js';
import type { RemoteEndpoint } from './remote-endpoint.js';
import { executeRemotely, type ExecuteOptions, type ExecutionOutcome } from './remote-execution.js';
import { requestMetadata, type ActionIdentity, type InvocationIdentity } from './request-metadata.js';
import { DEFAULT_BACKOFF, Retrier } from './retrier.js';

/**
 * BatchReadBlobs requests in flight at once; reads wait for the next batch while they are busy, so
 * batches grow with the load instead of the requests multiplying.
 */
const READ_BATCHES_IN_FLIGHT = 2;

export interface RemoteOptions {
  /** `--remote_executor`. */
  readonly executor?: RemoteEndpoint;
  /** `--remote_cache`; the executor's endpoint serves as the cache when absent. */
  readonly cache?: RemoteEndpoint;
  /** `--remote_instance_name`. */
  readonly instanceName: string;
  /** `--remote_header` (all calls), `--remote_cache_header` (CAS, ActionCache), `--remote_exec_header` (Execution). */
  readonly headers?: {
    readonly common?: readonly (readonly [string, string])[];
    readonly cache?: readonly (readonly [string, string])[];
    readonly exec?: readonly (readonly [string, string])[];
  };
  /**
   * `--remote_timeout` in milliseconds: the deadline of each unary call, and for streams (ByteStream,
   * Execute, WaitExecution) the longest wait between two messages. 0: none.
   */
  readonly timeoutMs: number;
  /** `--remote_retries`. */
  readonly retries: number;
  /** `--remote_retry_max_delay` in milliseconds (Bazel's default: 5 s). */
  readonly retryMaxDelayMs?: number;
  readonly tls?: TlsFiles;
  /** Headers a `--credential_helper` gives for each endpoint, asked on every call (they may be refreshed). */
  readonly credentialHeaders?: { readonly cache?: CredentialHeaders; readonly exec?: CredentialHeaders };
  readonly identity: InvocationIdentity;
  /** `--remote_cache_compression`: zstd blobs where the server takes them. */
  readonly compression?: boolean;
  /**
   * Whether blobs uploaded or found present are remembered and not asked about again (true by
   * default: one build). A client that lives for days (an executor) asks each time: the CAS may
   * have evicted what it sent hours ago, and the set would only grow.
   */
  readonly rememberUploads?: boolean;
  /**
   * Up to this many bytes in all, blobs are sent without a FindMissingBlobs first (0 by default):
   * for the few small outputs of one action, asking costs a round trip more than sending.
   */
  readonly sendWithoutAskingBytes?: number;
}

/** What GetCapabilities told this build. */
export interface RemoteCapabilities {
  readonly limits: CasLimits;
  readonly updateEnabled: boolean;
  readonly execEnabled: boolean;
}

/**
 * Kiln's REAPI client for one build: GetCapabilities once, then the CAS, the ActionCache and
 * Execution of one or two endpoints, every call with RequestMetadata and the user's headers, every
 * call retried as `--remote_retries` says. Speaks only REAPI v2, so any server serves it.
 */
export class RemoteClient {
  readonly cacheEndpoint: RemoteEndpoint;
  private readonly cacheChannel: RemoteChannel;
  private readonly execChannel: RemoteChannel | undefined;
  private readonly cas: RemoteCas;
  private readonly retrier: Retrier;
  private capabilitiesAnswer: Promise<RemoteCapabilities> | undefined;
  /** Blobs this build uploaded or found present; asked about again only after the server says it lost them. */
  private readonly present = new Set<string>();
  private readBatcher: BlobReadBatcher | undefined;

  constructor(
    readonly options: RemoteOptions,
    retrier?: Retrier,
  ) {
    const cache = options.cache ?? options.executor;
    if (!cache) throw new Error('RemoteClient needs --remote_executor or --remote_cache');
    this.cacheEndpoint = cache;
    this.retrier =
      retrier ?? new Retrier({ ...DEFAULT_BACKOFF, maxRetries: options.retries, maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs });
    this.cacheChannel = new RemoteChannel(cache, options.tls);
    this.execChannel = options.executor
      ? options.executor.url === cache.url
        ? this.cacheChannel
        : new RemoteChannel(options.executor, options.tls)
      : undefined;
    this.cas = new RemoteCas(this.cacheChannel, options.instanceName, this.retrier, options.timeoutMs);
  }

  get executorEndpoint(): RemoteEndpoint | undefined {
    return this.options.executor;
  }

  close(): void {
    this.cacheChannel.close();
    if (this.execChannel && this.execChannel !== this.cacheChannel) this.execChannel.close();
  }

  /** GetCapabilities of the cache (and of the executor when it is another endpoint), asked once. */
  capabilities(): Promise<RemoteCapabilities> {
    this.capabilitiesAnswer ??= this.fetchCapabilities();
    return this.capabilitiesAnswer;
  }

  private async fetchCapabilities(): Promise<RemoteCapabilities> {
    const ask = (channel: RemoteChannel, kind: 'cache' | 'exec') =>
      this.retrier.run(() =>
        unaryCall(
          channel,
          reapi.CapabilitiesService.GetCapabilities,
          { instanceName: this.options.instanceName },
          this.metadata(kind),
          this.options.timeoutMs,
          `Failed to query remote ${kind === 'exec' ? 'execution' : 'cache'} capabilities from ${channel.endpoint.url}`,
        ),
      );
    const cache = await ask(this.cacheChannel, this.execChannel === this.cacheChannel ? 'exec' : 'cache');
    const digestFunctions = cache.cacheCapabilities?.digestFunctions ?? [];
    if (digestFunctions.length > 0 && !digestFunctions.includes(reapi.DigestFunction_Value.SHA256)) {
      throw new RemoteCallError(`${this.cacheEndpoint.url} does not support the SHA256 digest function`, grpc.status.FAILED_PRECONDITION);
    }
    let execEnabled = false;
    if (this.execChannel) {
      const exec = this.execChannel === this.cacheChannel ? cache : await ask(this.execChannel, 'exec');
      const caps = exec.executionCapabilities;
      execEnabled = caps?.execEnabled ?? false;
      const functions = [caps?.digestFunction, ...(caps?.digestFunctions ?? [])];
      if (!execEnabled)
        throw new RemoteCallError(`${this.options.executor!.url} does not offer remote execution (exec_enabled is false)`, grpc.status.FAILED_PRECONDITION);
      if (!functions.includes(reapi.DigestFunction_Value.SHA256)) {
        throw new RemoteCallError(`${this.options.executor!.url} does not execute with the SHA256 digest function`, grpc.status.FAILED_PRECONDITION);
      }
    }
    return {
      limits: casLimitsOf(cache.cacheCapabilities, this.options.compression),
      updateEnabled: cache.cacheCapabilities?.actionCacheUpdateCapabilities?.updateEnabled ?? false,
      execEnabled,
    };
  }

  /**
   * Uploads what the server lacks of `blobs`: FindMissingBlobs first, skipping what this build
   * already sent unless `recheck` (the server said it lost some).
   */
  async uploadMissing(blobs: readonly BlobSource[], action?: ActionIdentity, options: { readonly recheck?: boolean } = {}): Promise<void> {
    const { limits } = await this.capabilities();
    const unknown = uniqueBlobs(blobs).filter((b) => b.digest.sizeBytes > 0 && (options.recheck || !this.present.has(digestKey(b.digest))));
    if (unknown.length === 0) return;
    const metadata = this.metadata('cache', action);
    const bytes = unknown.reduce((sum, b) => sum + b.digest.sizeBytes, 0);
    const missing =
      bytes <= (this.options.sendWithoutAskingBytes ?? 0)
        ? undefined
        : new Set(
            (
              await this.cas.findMissing(
                unknown.map((b) => b.digest),
                metadata,
              )
            ).map(digestKey),
          );
    await this.cas.upload(missing ? unknown.filter((b) => missing.has(digestKey(b.digest))) : unknown, limits, metadata);
    this.remember(unknown);
  }

  /** Uploads `blobs` whatever this build believed (the server said it lacks them). */
  async reupload(blobs: readonly BlobSource[], action?: ActionIdentity): Promise<void> {
    for (const b of blobs) this.present.delete(digestKey(b.digest));
    const { limits } = await this.capabilities();
    await this.cas.upload(
      uniqueBlobs(blobs).filter((b) => b.digest.sizeBytes > 0),
      limits,
      this.metadata('cache', action),
    );
    this.remember(blobs);
  }

  private remember(blobs: readonly BlobSource[]): void {
    if (this.options.rememberUploads === false) return;
    for (const b of blobs) this.present.add(digestKey(b.digest));
  }

  /**
   * A blob's bytes, checked against its digest. Small blobs are read in BatchReadBlobs requests shared
   * with the reads of other actions (so their RequestMetadata names no action); large ones are
   * streamed with the action's.
   */
  async read(digest: Digest, action?: ActionIdentity): Promise<Buffer> {
    if (digest.sizeBytes === 0) return Buffer.alloc(0);
    const { limits } = await this.capabilities();
    if (RemoteCas.batchable(digest, limits)) return this.batchedReads(limits).read(digest);
    return this.cas.read(digest, limits, this.metadata('cache', action));
  }

  /**
   * Streams a blob into `file` (open for writing, empty) from position 0, hashed as it streams:
   * small blobs through the build's batches, larger ones over ByteStream Read (resumed at the bytes
   * received after a break), never whole in memory. Fails as soon as the server sends more than the
   * digest's size, and when the bytes fall short of it or do not match it.
   */
  async readToFile(digest: Digest, file: FileHandle, action?: ActionIdentity): Promise<void> {
    if (digest.sizeBytes === 0) return;
    const { limits } = await this.capabilities();
    if (RemoteCas.batchable(digest, limits)) return writeFully(file, await this.batchedReads(limits).read(digest), 0);
    await this.cas.stream(digest, { write: (data, offset) => writeFully(file, data, offset) }, limits, this.metadata('cache', action));
  }

  private batchedReads(limits: CasLimits): BlobReadBatcher {
    this.readBatcher ??= new BlobReadBatcher(
      (digests) => this.cas.batchRead(digests, limits, this.metadata('cache')),
      RemoteCas.batchCost,
      limits.maxBatchTotalSizeBytes,
      READ_BATCHES_IN_FLIGHT,
    );
    return this.readBatcher;
  }

  /** The cached result of an action; undefined when the server has none (NOT_FOUND). */
  async getActionResult(actionDigest: Digest, action?: ActionIdentity): Promise<reapi.ActionResult | undefined> {
    await this.capabilities();
    const channel = this.cacheChannel;
    try {
      return await this.retrier.run(() =>
        unaryCall(
          channel,
          reapi.ActionCacheService.GetActionResult,
          { instanceName: this.options.instanceName, actionDigest, inlineStdout: false, inlineStderr: false },
          this.metadata('cache', action),
          this.options.timeoutMs,
          `GetActionResult on ${channel.endpoint.url}`,
        ),
      );
    } catch (e) {
      if (e instanceof RemoteCallError && e.code === grpc.status.NOT_FOUND) return undefined;
      throw e;
    }
  }

  async updateActionResult(actionDigest: Digest, result: reapi.ActionResultInit, action?: ActionIdentity): Promise<void> {
    const channel = this.cacheChannel;
    await this.retrier.run(() =>
      unaryCall(
        channel,
        reapi.ActionCacheService.UpdateActionResult,
        { instanceName: this.options.instanceName, actionDigest, actionResult: result },
        this.metadata('cache', action),
        this.options.timeoutMs,
        `UpdateActionResult on ${channel.endpoint.url}`,
      ),
    );
  }

  async execute(actionDigest: Digest, options: ExecuteOptions, action?: ActionIdentity): Promise<ExecutionOutcome> {
    if (!this.execChannel) throw new Error('execute needs --remote_executor');
    await this.capabilities();
    return executeRemotely(
      this.execChannel,
      this.options.instanceName,
      actionDigest,
      options,
      this.metadata('exec', action),
      this.retrier,
      this.options.timeoutMs,
    );
  }

  private metadata(kind: 'cache' | 'exec', action?: ActionIdentity): grpc.Metadata {
    const headers = this.options.headers ?? {};
    const helped = this.options.credentialHeaders?.[kind]?.headers() ?? [];
    return requestMetadata(this.options.identity, [...(headers.common ?? []), ...((kind === 'cache' ? headers.cache : headers.exec) ?? []), ...helped], action);
  }
}

function uniqueBlobs(blobs: readonly BlobSource[]): BlobSource[] {
  return [...new Map(blobs.map((b) => [digestKey(b.digest), b])).values()];
}
