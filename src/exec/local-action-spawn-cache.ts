import { declaresExactly } from './declared-outputs.js';
import { outputAbsent, outputOnDisk } from './outputs-on-disk.js';
import type { FileDigestCache } from './file-digest-cache.js';
import type { LocalActionCache } from './local-action-cache.js';
import { cachePolicy, NOT_CACHED, type CacheLookup, type CacheRequest, type SpawnCache } from './spawn-cache.js';

/**
 * The local action cache as a spawn cache: a hit needs the recorded outputs still on disk in the
 * execroot with the recorded digests and executable bits (checked through the digest cache, so a
 * null build reads no file). Nothing is restored; a hit is not a process. A result left on the
 * remote server (builds without the bytes) is recorded as such: while the build has that server
 * (`remoteOutputsUsable`), its outputs may be absent, as Bazel's action cache keeps remote metadata,
 * so a null build without the bytes asks the server nothing.
 */
export class LocalActionSpawnCache implements SpawnCache {
  constructor(
    private readonly cache: LocalActionCache,
    private readonly execRoot: string,
    private readonly digestCache: FileDigestCache,
    private readonly remoteOutputsUsable = false,
  ) {}

  async lookup(request: CacheRequest): Promise<CacheLookup> {
    if (!cachePolicy(request.action).local) return NOT_CACHED;
    const hit = await this.upToDate(request);
    if (hit) return hit;
    return { kind: 'miss', store: async (result) => this.cache.put(request.localKey, result.outputs, result.remoteOnly === true) };
  }

  private async upToDate(request: CacheRequest): Promise<CacheLookup | undefined> {
    const recorded = this.cache.get(request.localKey);
    if (!recorded) return undefined;
    let absent = false;
    for (const output of recorded.outputs) {
      if (await outputOnDisk(output, this.execRoot, this.digestCache)) continue;
      // Absent is fine for an output left on a server this build can fetch it from.
      if (!recorded.remoteOnly || !this.remoteOutputsUsable || !outputAbsent(output, this.execRoot)) return undefined;
      absent = true;
    }
    if (!declaresExactly(request.action, recorded.outputs)) return undefined;
    return absent ? { kind: 'hit', outputs: recorded.outputs, remoteOnly: true } : { kind: 'hit', outputs: recorded.outputs };
  }
}
