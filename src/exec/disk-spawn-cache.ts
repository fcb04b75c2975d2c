import { join } from 'node:path';
import { producedFiles } from '../actions/index.js';
import { declaredSymlinks, declaresExactly } from './declared-outputs.js';
import type { DiskCache } from './disk-cache.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { cachePolicy, NOT_CACHED, type CacheLookup, type CacheRequest, type SpawnCache } from './spawn-cache.js';

/**
 * `--disk_cache` as a spawn cache, keyed by the REAPI action digest. The cache directory is opened
 * (and scanned) on the first action that gets this far, so a build the local action cache fully
 * answers never opens it. A hit restores the outputs into the execroot atomically.
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
    const outputs = request.action.outputs;
    const declared = new Set(outputs.map((o) => o.execPath));
    const cached = await cache.lookup(key, declared, declaredSymlinks(request.action));
    if (cached && declaresExactly(request.action, cached) && (await cache.restore(cached, this.execRoot))) {
      for (const o of producedFiles(cached)) await this.digestCache.remember(join(this.execRoot, o.path), o.digest);
      return { kind: 'hit', outputs: cached, processKind: 'disk cache hit' };
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
