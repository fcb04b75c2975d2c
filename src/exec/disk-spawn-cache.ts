import { join } from 'node:path';
import { producedFiles } from '../actions/index.js';
import { declaredKinds, declaresExactly } from './declared-outputs.js';
import type { DiskCache } from './disk-cache.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { cachePolicy, NOT_CACHED, type CacheLookup, type CacheRequest, type SpawnCache } from './spawn-cache.js';

/**
 * `--disk_cache` as a spawn cache, keyed by the REAPI action digest. The cache directory is opened
 * (and scanned) on the first action that gets this far, so a build the local action cache fully
 * answers never opens it. A hit restores the outputs into the execroot atomically; an entry that fails
 * the checks (DiskCache.lookup) or cannot be restored is deleted and the action runs.
 */
export class DiskSpawnCache implements SpawnCache {
  private opened: Promise<DiskCache> | undefined;

  constructor(
    private readonly open: () => Promise<DiskCache>,
    private readonly execRoot: string,
    private readonly digestCache: FileDigestCache,
  ) {}

  async lookup(request: CacheRequest): Promise<CacheLookup> {
    if (!cachePolicy(request.action).shared) return NOT_CACHED;
    const cache = await (this.opened ??= this.open());
    const key = request.remoteKey().digest;
    const cached = await cache.lookup(key, declaredKinds(request.action));
    if (cached) {
      // An entry for fewer outputs than declared, or one whose blobs turn out corrupt, is no use to any build.
      if (declaresExactly(request.action, cached) && (await cache.restore(cached, this.execRoot))) {
        for (const o of producedFiles(cached)) await this.digestCache.remember(join(this.execRoot, o.path), o.digest);
        return { kind: 'hit', outputs: cached, processKind: 'disk cache hit' };
      }
      await cache.discard(key);
    }
    return {
      kind: 'miss',
      // Outputs left on the remote server are not here to copy.
      store: async (result) => {
        if (result.remoteOnly) return;
        await cache.store(key, result.outputs, this.execRoot).catch((e: Error) => {
          throw new Error(`writing to the disk cache failed: ${e.message}`, { cause: e });
        });
      },
    };
  }
}
