import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { digestKey, parseDigest, reapi, type Digest } from '../src/core/index.js';
import type { CasClient } from './cas-client.js';
import type { FileCache } from './file-cache.js';

/** Files linked at once, to bound open file handles. */
const LINK_CONCURRENCY = 64;

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

/**
 * Lays out the input root `rootDigest` under `dir` (which exists): directories created, files hard
 * linked from the file cache, symlinks made as given (the scheduler checked they stay inside).
 */
export async function materializeInputRoot(cas: CasClient, cache: FileCache, rootDigest: Digest, dir: string): Promise<void> {
  let level: { digest: Digest; path: string }[] = [{ digest: rootDigest, path: dir }];
  while (level.length > 0) {
    const blobs = await cas.getMany(level.map((l) => l.digest));
    const next: { digest: Digest; path: string }[] = [];
    const files: { digest: Digest; executable: boolean; path: string }[] = [];
    for (const { digest, path } of level) {
      const directory = reapi.Directory.decode(blobs.get(digestKey(digest))!);
      for (const sub of directory.directories) {
        const subPath = join(path, sub.name);
        await mkdir(subPath);
        next.push({ digest: parseDigest(sub.digest, 'DirectoryNode.digest'), path: subPath });
      }
      for (const f of directory.files) files.push({ digest: parseDigest(f.digest, 'FileNode.digest'), executable: f.isExecutable, path: join(path, f.name) });
      for (const s of directory.symlinks) await symlink(s.target, join(path, s.name));
    }
    await inBatches(files, LINK_CONCURRENCY, (f) => cache.linkInto(f.digest, f.executable, f.path));
    level = next;
  }
}
