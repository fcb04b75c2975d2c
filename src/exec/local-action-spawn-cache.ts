import { join } from 'node:path';
import { declaresExactly } from './declared-outputs.js';
import type { CachedOutput } from './disk-cache.js';
import type { FileDigestCache } from './file-digest-cache.js';
import type { LocalActionCache } from './local-action-cache.js';
import { cachePolicy, NOT_CACHED, type CacheLookup, type CacheRequest, type SpawnCache } from './spawn-cache.js';

/**
 * The local action cache as a spawn cache: a hit needs the recorded outputs still on disk in the
 * execroot with the recorded digests and executable bits (checked through the digest cache, so a
 * null build reads no file). Nothing is restored; a hit is not a process.
 */
export class LocalActionSpawnCache implements SpawnCache {
  constructor(
    private readonly cache: LocalActionCache,
    private readonly execRoot: string,
    private readonly digestCache: FileDigestCache,
  ) {}

  async lookup(request: CacheRequest): Promise<CacheLookup> {
    if (!cachePolicy(request.action).local) return NOT_CACHED;
    const outputs = await this.upToDate(request);
    if (outputs) return { kind: 'hit', outputs };
    return {
      kind: 'miss',
      // A result whose outputs stayed remote is not up to date here: the next build asks the remote cache again.
      store: async (result) => {
        if (!result.remoteOnly) this.cache.put(request.localKey, result.outputs);
      },
    };
  }

  private async upToDate(request: CacheRequest): Promise<CachedOutput[] | undefined> {
    const recorded = this.cache.get(request.localKey);
    if (!recorded) return undefined;
    const outputs: CachedOutput[] = [];
    for (const file of recorded) {
      try {
        const now = await this.digestCache.digest(join(this.execRoot, file.path));
        if (now.isDirectory || now.digest.hash !== file.digest.hash || now.isExecutable !== file.isExecutable) return undefined;
        outputs.push({ path: file.path, digest: now.digest, isExecutable: now.isExecutable });
      } catch {
        return undefined;
      }
    }
    return declaresExactly(request.action, outputs) ? outputs : undefined;
  }
}
