import type { CacheLookup, CacheMiss, CacheRequest, SpawnCache, SpawnResult } from './spawn-cache.js';

/**
 * Consults caches in order (local action cache, disk cache, remote cache). The first hit answers,
 * and the caches before it that missed store it (a disk cache hit fills the local action cache, a
 * remote hit the disk cache too). When all miss, the handle stores the run's result in each.
 * A failed store is a warning, never a failed action.
 */
export class SpawnCacheChain implements SpawnCache {
  constructor(
    private readonly caches: readonly SpawnCache[],
    private readonly warn: (message: string) => void,
  ) {}

  async lookup(request: CacheRequest): Promise<CacheLookup> {
    const misses: CacheMiss[] = [];
    for (const cache of this.caches) {
      const found = await cache.lookup(request);
      if (found.kind === 'hit') {
        await this.storeAll(misses, { outputs: found.outputs, ranAs: found.processKind, ...(found.remoteOnly ? { remoteOnly: true } : {}) });
        return found;
      }
      misses.push(found);
    }
    return { kind: 'miss', store: (result) => this.storeAll(misses, result) };
  }

  private async storeAll(misses: readonly CacheMiss[], result: SpawnResult): Promise<void> {
    for (const miss of misses) await miss.store(result).catch((e: Error) => this.warn(e.message));
  }
}
