import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestKey, type Digest } from '../core/index.js';
import { producedFiles, type ProducedOutput } from '../actions/index.js';
import {
  OutputDownloadError,
  resultFieldsOf,
  resultOutputs,
  writeProducedOutputs,
  type ActionIdentity,
  type BlobSource,
  type RemoteClient,
} from '../remote/index.js';
import { declaredKinds, declaresExactly, deleteDeclaredOutputs } from './declared-outputs.js';
import { outputAbsent, outputOnDisk } from './outputs-on-disk.js';
import { remoteBlobReader, type RemoteOutputs } from './remote-outputs.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { cachePolicy, NOT_CACHED, type CacheLookup, type CacheRequest, type SpawnCache, type SpawnResult } from './spawn-cache.js';

export interface RemoteSpawnCacheOptions {
  /** `--remote_accept_cached` (default true): look results up; false still uploads. */
  readonly acceptCached: boolean;
  /** `--remote_upload_local_results` (default true): store results of actions run here. */
  readonly uploadLocalResults: boolean;
  readonly warn: (message: string) => void;
  /** Which outputs come to this machine (--remote_download_outputs). */
  readonly outputs: RemoteOutputs;
}

/**
 * The remote cache (`--remote_cache`, or the executor's endpoint) as a spawn cache: GetActionResult
 * by the REAPI action digest; a hit downloads the outputs into the execroot, each checked against
 * its digest. After a local run the outputs, the Action and the Command are uploaded and the result
 * stored with UpdateActionResult; a remote execution stored its own result already. A remote cache
 * that cannot be reached is a warning (once), and the build goes on without it, as in Bazel.
 */
export class RemoteSpawnCache implements SpawnCache {
  private warned = false;

  constructor(
    private readonly client: RemoteClient,
    private readonly execRoot: string,
    private readonly digestCache: FileDigestCache,
    private readonly options: RemoteSpawnCacheOptions,
  ) {}

  async lookup(request: CacheRequest): Promise<CacheLookup> {
    if (!cachePolicy(request.action).shared) return NOT_CACHED;
    const key = request.remoteKey();
    const identity: ActionIdentity = { actionId: key.digest.hash, mnemonic: request.action.mnemonic, targetId: request.action.owner };
    if (this.options.acceptCached) {
      try {
        const hit = await this.fetch(request, key.digest, identity);
        if (hit) return hit;
      } catch (e) {
        this.warnOnce(`Remote Cache: ${(e as Error).message}`);
      }
    }
    return { kind: 'miss', store: (result) => this.store(request, key.digest, identity, result) };
  }

  private async fetch(request: CacheRequest, actionDigest: Digest, identity: ActionIdentity): Promise<CacheLookup | undefined> {
    const result = await this.client.getActionResult(actionDigest, identity);
    if (result?.exitCode !== 0) return undefined;
    const reader = remoteBlobReader(this.client, identity);
    let outputs;
    try {
      outputs = await resultOutputs(result, declaredKinds(request.action), (d) => reader.read(d), { executable: request.action.executableOutputs });
    } catch (e) {
      if (e instanceof OutputDownloadError) return undefined; // other outputs, a bad tree, too large a tree: a miss
      throw e;
    }
    // Only a result of exactly the declared outputs, each of its declared kind, is usable here.
    if (!declaresExactly(request.action, outputs)) return undefined;
    if (!this.options.outputs.wanted(request.action)) {
      // After a clean nothing is there: one lstat per output says so, with no digest to look up.
      const absent = outputs.filter((o) => outputAbsent(o, this.execRoot)).length;
      if (absent === 0 && (await this.onDisk(outputs))) return { kind: 'hit', outputs, processKind: 'remote cache hit' };
      // Known by digest only: what an earlier build left at those paths is stale.
      if (absent < outputs.length) await deleteDeclaredOutputs(request.action, this.execRoot, this.digestCache);
      return { kind: 'hit', outputs, processKind: 'remote cache hit', remoteOnly: true };
    }
    await writeProducedOutputs(outputs, this.execRoot, reader);
    for (const f of producedFiles(outputs)) await this.digestCache.remember(join(this.execRoot, f.path), f.digest);
    return { kind: 'hit', outputs, processKind: 'remote cache hit' };
  }

  /** Whether every output is already in the execroot as the result says (a download an earlier build fetched). */
  private async onDisk(outputs: readonly ProducedOutput[]): Promise<boolean> {
    for (const o of outputs) if (!(await outputOnDisk(o, this.execRoot, this.digestCache))) return false;
    return true;
  }

  private async store(request: CacheRequest, actionDigest: Digest, identity: ActionIdentity, result: SpawnResult): Promise<void> {
    // A remote execution (or a remote hit) is stored by the server already.
    if (result.ranAs === 'remote' || result.ranAs === 'remote cache hit' || result.remoteOnly || !this.options.uploadLocalResults) return;
    try {
      const { updateEnabled } = await this.client.capabilities();
      if (!updateEnabled) return;
      const key = request.remoteKey();
      const message = (m: { digest: Digest; data: Buffer }): BlobSource => ({ digest: m.digest, data: async () => m.data });
      const { fields, treeBlobs } = resultFieldsOf(result.outputs);
      const blobs = new Map<string, BlobSource>();
      for (const o of producedFiles(result.outputs)) blobs.set(digestKey(o.digest), { digest: o.digest, data: () => readFile(join(this.execRoot, o.path)) });
      for (const t of treeBlobs) blobs.set(digestKey(t.digest), message(t));
      await this.client.uploadMissing([message(key.action), message(key.command), ...blobs.values()], identity);
      await this.client.updateActionResult(actionDigest, { ...fields, exitCode: 0 }, identity);
    } catch (e) {
      this.warnOnce(`Remote Cache: ${(e as Error).message}`);
    }
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.options.warn(message);
  }
}
