import { readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_TREE_DEPTH, symlinkEscape, type TreeContents, type TreeFile, type TreeSymlink } from '../actions/index.js';
import type { FileDigestCache } from './file-digest-cache.js';

/** A tree artifact that cannot be kept as it is (a symlink leaving it, an entry that is no file). */
export class InvalidTreeArtifactError extends Error {}

/**
 * Reads the tree artifact at `root` (an existing directory): its files (digested through the digest
 * cache), its directories and its symlinks. A relative symlink is kept as a symlink and must stay
 * inside the tree; an absolute one stands for the regular file it points to (Bazel follows it);
 * anything else (an escaping symlink, a socket, a FIFO) fails with Bazel's message naming the entry.
 */
export async function collectTree(root: string, execPath: string, digestCache: FileDigestCache): Promise<TreeContents> {
  const files: TreeFile[] = [];
  const symlinks: TreeSymlink[] = [];
  const directories: string[] = [];
  const walk = async (dir: string, prefix: string, depth: number): Promise<void> => {
    if (depth > MAX_TREE_DEPTH) throw new InvalidTreeArtifactError(`tree artifact '${execPath}' is nested more than ${MAX_TREE_DEPTH} levels deep`);
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const full = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        const target = await readlink(full);
        if (target.startsWith('/')) {
          // As Bazel: an absolute symlink stands for the file it points to.
          const pointed = await stat(full).catch(() => undefined);
          if (!pointed?.isFile())
            throw new InvalidTreeArtifactError(`child ${path} of tree artifact ${execPath} is an absolute symlink to '${target}', which is not a regular file`);
          const file = await digestCache.digest(full, { settled: true });
          files.push({ path, digest: file.digest, isExecutable: file.isExecutable });
        } else if (symlinkEscape(path, target)) {
          throw new InvalidTreeArtifactError(
            `A TreeArtifact may not contain relative symlinks whose target paths traverse outside of the TreeArtifact, found ${execPath}/${path} pointing to ${target}.`,
          );
        } else symlinks.push({ path, target });
      } else if (entry.isDirectory()) {
        directories.push(path);
        await walk(full, path, depth + 1);
      } else if (entry.isFile()) {
        const file = await digestCache.digest(full, { settled: true });
        files.push({ path, digest: file.digest, isExecutable: file.isExecutable });
      } else {
        throw new InvalidTreeArtifactError(`child ${path} of tree artifact ${execPath} is not a regular file, directory or symlink`);
      }
    }
  };
  await walk(root, '', 0);
  return { files, symlinks, directories };
}

/** Whether two trees hold the same entries with the same contents. */
export function sameTree(a: TreeContents, b: TreeContents): boolean {
  const key = (t: TreeContents) =>
    JSON.stringify([
      t.files.map((f) => JSON.stringify([f.path, f.digest.hash, f.isExecutable])).sort(),
      t.symlinks.map((l) => JSON.stringify([l.path, l.target])).sort(),
      [...t.directories].sort(),
    ]);
  return key(a) === key(b);
}
