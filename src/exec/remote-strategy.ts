import { status as grpcStatus } from '@grpc/grpc-js';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { producedFiles, type ProducedOutput } from '../actions/index.js';
import { msFromTimestamp, parseDigest, reapi, type Digest } from '../core/index.js';
import type { ProcessResult } from '../core/sandbox/index.js';
import {
  actionBlobs,
  blobsNamed,
  downloadOutputs,
  isRemoteCallError,
  resultOutputs,
  OutputDownloadError,
  type ActionIdentity,
  type RemoteClient,
} from '../remote/index.js';
import { declaredKinds } from './declared-outputs.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { remoteBlobReader, type RemoteOutputs } from './remote-outputs.js';
import { cachePolicy } from './spawn-cache.js';
import { CAPTURED_OUTPUT_LIMIT_BYTES, inSlot, RemoteExecutionFailure, SpawnLost, type Spawn, type SpawnOutcome, type SpawnStrategy } from './spawn-strategy.js';

export interface RemoteStrategyOptions {
  /** `--remote_accept_cached` (default true): the executor may answer from its action cache. */
  readonly acceptCached: boolean;
  /** `--remote_local_fallback`: when the remote system fails (not the action), run it with this strategy instead. */
  readonly fallback?: SpawnStrategy;
  readonly warn: (message: string) => void;
  /** Which outputs come to this machine (--remote_download_outputs). */
  readonly outputs: RemoteOutputs;
}

/**
 * Bazel's remote strategy: uploads what the server lacks of the action (Action, Command, input
 * Directories and files), Executes it, and writes the outputs of a successful run into the execroot,
 * each checked against its digest. A failure of the remote system (unreachable after the retries, an
 * invalid result) fails the action with the endpoint named, or runs it through the fallback strategy
 * with `--remote_local_fallback`. A non-zero exit is the action's own failure, never retried locally.
 */
export class RemoteStrategy implements SpawnStrategy {
  readonly name = 'remote';
  readonly runnerName = 'remote';
  private warnedFallback = false;

  constructor(
    private readonly client: RemoteClient,
    private readonly digestCache: FileDigestCache,
    private readonly options: RemoteStrategyOptions,
  ) {}

  async exec(spawn: Spawn): Promise<SpawnOutcome> {
    try {
      return await this.execRemotely(spawn);
    } catch (e) {
      if (!isRemoteCallError(e) && !(e instanceof OutputDownloadError)) throw e;
      if (spawn.signal?.aborted) throw e;
      const endpoint = this.client.executorEndpoint?.url ?? this.client.cacheEndpoint.url;
      if (this.options.fallback) {
        if (!this.warnedFallback) {
          this.warnedFallback = true;
          this.options.warn(`Remote execution on ${endpoint} failed (${e.message}); running actions locally (--remote_local_fallback)`);
        }
        // Inputs an earlier remote action left on the server must be here for the local run.
        await this.options.outputs.fetchInputs(spawn.action);
        return { ...(await this.options.fallback.exec(spawn)), ranAs: this.options.fallback.runnerName };
      }
      throw new RemoteExecutionFailure(`${spawn.action.progressMessage} failed: remote execution on ${endpoint}: ${e.message}`, undefined, { cause: e });
    }
  }

  private async execRemotely(spawn: Spawn): Promise<SpawnOutcome> {
    const { action, execRoot } = spawn;
    const key = spawn.remoteKey();
    const identity: ActionIdentity = { actionId: key.digest.hash, mnemonic: action.mnemonic, targetId: action.owner };
    const blobs = actionBlobs(key, spawn.inputs, execRoot);
    let operation = '';
    let cachedResult = false;
    let leftRemote: ProducedOutput[] | undefined;
    const executeOnce = (skipCacheLookup: boolean) =>
      this.client.execute(
        key.digest,
        {
          skipCacheLookup,
          // The server lost blobs: send those it named, then ask again about all (it names one tree level at a time).
          reupload: async (missing: readonly Digest[]) => {
            await this.client.reupload(blobsNamed(blobs, missing), identity);
            await this.client.uploadMissing(blobs, identity, { recheck: true });
          },
          ...(spawn.signal ? { signal: spawn.signal } : {}),
        },
        identity,
      );
    const execute = async (skipCacheLookup: boolean): Promise<ProcessResult> => {
      const started = performance.now();
      await this.client.uploadMissing(blobs, identity);
      let outcome = await executeOnce(skipCacheLookup);
      // A failed test is never a cached result (Bazel does not cache them): a server that kept one runs it again.
      if (outcome.response.cachedResult && action.exitCodeIsResult && outcome.response.result?.exitCode !== 0) outcome = await executeOnce(true);
      operation = outcome.operationName;
      cachedResult = outcome.response.cachedResult;
      // The server's timeout may come without a result: nothing ran to the end, nothing to download; its message is the stderr.
      const r =
        outcome.response.result ?? reapi.ActionResult.create({ exitCode: 1, stderrRaw: Buffer.from(`${outcome.response.status?.message ?? 'timed out'}\n`) });
      const [stdout, stderr] = await Promise.all([
        this.streamOf(r.stdoutRaw, r.stdoutDigest, identity, join(spawn.scratchDir, 'remote-stdout')),
        this.streamOf(r.stderrRaw, r.stderrDigest, identity, join(spawn.scratchDir, 'remote-stderr')),
      ]);
      if (spawn.claim && !spawn.claim()) throw new SpawnLost();
      // A test's outputs (its log, its XML) are its result whatever its exit code.
      if (r.exitCode === 0 || action.exitCodeIsResult) {
        // Every output checked against the declared ones (path and kind) before anything is written.
        const declared = declaredKinds(action);
        const reader = remoteBlobReader(this.client, identity);
        const options = { executable: action.executableOutputs };
        // Not wanted here: known by digest (trees by their Tree message, read now), written only when needed.
        leftRemote = this.options.outputs.wanted(action) ? undefined : await resultOutputs(r, declared, (d) => reader.read(d), options);
        if (!leftRemote) {
          const outputs = await downloadOutputs(r, execRoot, declared, reader, options);
          for (const f of producedFiles(outputs)) await this.digestCache.remember(join(execRoot, f.path), f.digest);
        }
      }
      const timedOut = outcome.response.status?.code === grpcStatus.DEADLINE_EXCEEDED;
      return {
        exitCode: timedOut && r.exitCode === 0 ? 1 : r.exitCode,
        signal: null,
        timedOut,
        stdout: stdout.bytes,
        stderr: stderr.bytes,
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        wallTimeMs: executionWallTimeMs(r.executionMetadata) ?? performance.now() - started,
      };
    };
    const skipCacheLookup = !this.options.acceptCached || !cachePolicy(action).shared;
    const result = await inSlot(
      spawn,
      () =>
        execute(skipCacheLookup).catch((e: unknown) => {
          // An output the server no longer has (evicted between the run and the download): run it again, as Bazel does.
          if (!isRemoteCallError(e) || e.code !== grpcStatus.NOT_FOUND) throw e;
          return execute(true);
        }),
      { runnerName: 'remote', localSlot: false },
    );
    return {
      ...result,
      ...(cachedResult ? { ranAs: 'remote cache hit' as const } : {}),
      ...(leftRemote ? { remoteOutputs: leftRemote } : {}),
      detail: `remote operation ${operation} on ${this.client.executorEndpoint!.url}`,
    };
  }

  /**
   * stdout or stderr of a result: inline, or read from the CAS by digest. Beyond the captured-output
   * limit the stream goes to `file` (in the spawn's scratch directory), not memory, and its head is
   * kept, cut as a local action's output is.
   */
  private async streamOf(
    raw: Buffer,
    digest: reapi.Digest | null | undefined,
    identity: ActionIdentity,
    file: string,
  ): Promise<{ bytes: Buffer; truncated: boolean }> {
    if (raw.length > 0 || !digest || digest.sizeBytes === 0) return { bytes: Buffer.from(raw), truncated: false };
    const checked = parseDigest(digest, 'stdout/stderr digest');
    if (checked.sizeBytes <= CAPTURED_OUTPUT_LIMIT_BYTES) return { bytes: await this.client.read(checked, identity), truncated: false };
    const handle = await open(file, 'w+');
    try {
      await this.client.readToFile(checked, handle, identity);
      const head = Buffer.alloc(CAPTURED_OUTPUT_LIMIT_BYTES);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return { bytes: head.subarray(0, bytesRead), truncated: true };
    } finally {
      await handle.close();
    }
  }
}

/** How long the process ran on the executor, as its metadata says (Bazel's test times too); undefined when it does not say. */
function executionWallTimeMs(metadata: reapi.ExecutedActionMetadata | null | undefined): number | undefined {
  if (!metadata?.executionStartTimestamp || !metadata.executionCompletedTimestamp) return undefined;
  try {
    const ms = msFromTimestamp(metadata.executionCompletedTimestamp) - msFromTimestamp(metadata.executionStartTimestamp);
    return ms >= 0 ? ms : undefined;
  } catch {
    return undefined; // a malformed timestamp only costs the precise time
  }
}
