import { join } from 'node:path';
import { declaresExactly } from './declared-outputs.js';
import { lstatSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import type { ProducedSymlink, ProducedTree } from '../actions/index.js';
import type { CachedOutput } from './disk-cache.js';
import { collectTree, sameTree } from './tree-collection.js';
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
    const outputs: CachedOutput[] = [];
    let absent = false;
    for (const file of recorded.outputs) {
      if (file.kind !== undefined) {
        // A tree or a symlink is read again whole: a walk of its directory, its files through the digest cache.
        if (!(await stillOnDisk(file, this.execRoot, this.digestCache))) return undefined;
        outputs.push(file);
        continue;
      }
      try {
        const now = await this.digestCache.digest(join(this.execRoot, file.path));
        if (now.isDirectory || now.digest.hash !== file.digest.hash || now.isExecutable !== file.isExecutable) return undefined;
        outputs.push({ path: file.path, digest: now.digest, isExecutable: now.isExecutable });
      } catch (e) {
        // Absent is fine for an output left on a server this build can fetch it from.
        const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
        if (!missing || !recorded.remoteOnly || !this.remoteOutputsUsable) return undefined;
        absent = true;
        outputs.push(file);
      }
    }
    if (!declaresExactly(request.action, outputs)) return undefined;
    return absent ? { kind: 'hit', outputs, remoteOnly: true } : { kind: 'hit', outputs };
  }
}

/** Whether a recorded tree or symlink output is on disk as recorded. */
async function stillOnDisk(output: ProducedTree | ProducedSymlink, execRoot: string, digestCache: FileDigestCache): Promise<boolean> {
  const path = join(execRoot, output.path);
  const stat = lstatSync(path, { throwIfNoEntry: false });
  try {
    if (output.kind === 'symlink') return stat?.isSymbolicLink() === true && (await readlink(path)) === output.target;
    return stat?.isDirectory() === true && sameTree(await collectTree(path, output.path, digestCache), output.tree);
  } catch {
    return false; // changed under us (an escaping link added by hand): run again
  }
}
