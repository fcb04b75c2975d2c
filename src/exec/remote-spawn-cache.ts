import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestKey, type Digest } from '../core/index.js';
import { downloadOutputs, listedOutputFiles, type ActionIdentity, type BlobSource, type RemoteClient } from '../remote/index.js';
import { declaresExactly, deleteDeclaredOutputs } from './declared-outputs.js';
import type { RemoteOutputs } from './remote-outputs.js';
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
    if (!result || result.exitCode !== 0) return undefined;
    // Only a result of exactly the declared files is usable here.
    if (result.outputDirectories.length > 0 || result.outputSymlinks.length > 0 || result.outputFileSymlinks.length > 0) return undefined;
    const listed = result.outputFiles.map((f) => ({ path: f.path, digest: { hash: f.digest?.hash ?? '', sizeBytes: f.digest?.sizeBytes ?? 0 }, isExecutable: f.isExecutable }));
    if (!declaresExactly(request.action, listed)) return undefined;
    const declared = new Set(request.action.outputs.map((o) => o.execPath));
    if (!this.options.outputs.wanted(request.action)) {
      const listed = listedOutputFiles(result, declared, { executable: request.action.executableOutputs });
      if (listed) {
        if (await this.onDisk(listed)) return { kind: 'hit', outputs: listed, processKind: 'remote cache hit' };
        // Known by digest only: what an earlier build left at those paths is stale.
        await deleteDeclaredOutputs(request.action, this.execRoot, this.digestCache);
        return { kind: 'hit', outputs: listed, processKind: 'remote cache hit', remoteOnly: true };
      }
    }
    const files = await downloadOutputs(result, this.execRoot, declared, (digest) => this.client.read(digest, identity), {
      executable: request.action.executableOutputs,
    });
    for (const f of files) await this.digestCache.remember(join(this.execRoot, f.path), f.digest);
    return { kind: 'hit', outputs: files, processKind: 'remote cache hit' };
  }

  /** Whether every file is already in the execroot with these contents (a download earlier build fetched). */
  private async onDisk(files: readonly { path: string; digest: Digest; isExecutable: boolean }[]): Promise<boolean> {
    for (const f of files) {
      const now = await this.digestCache.digest(join(this.execRoot, f.path)).catch(() => undefined);
      if (!now || now.isDirectory || now.digest.hash !== f.digest.hash || now.isExecutable !== f.isExecutable) return false;
    }
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
      const outputs = new Map<string, BlobSource>();
      for (const o of result.outputs) outputs.set(digestKey(o.digest), { digest: o.digest, data: () => readFile(join(this.execRoot, o.path)) });
      await this.client.uploadMissing([message(key.action), message(key.command), ...outputs.values()], identity);
      await this.client.updateActionResult(
        actionDigest,
        { outputFiles: result.outputs.map((o) => ({ path: o.path, digest: o.digest, isExecutable: o.isExecutable })), exitCode: 0 },
        identity,
      );
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
