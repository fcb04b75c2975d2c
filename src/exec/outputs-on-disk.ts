import { lstatSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProducedOutput } from '../actions/index.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { collectTree, sameTree } from './tree-collection.js';

/**
 * Whether `output` is in the execroot as recorded: a file with its digest and executable bit
 * (through the digest cache, so usually one stat), a tree with the same entries (a walk of its
 * directory), a symlink with the same target. Absent, changed or unreadable: false.
 */
export async function outputOnDisk(output: ProducedOutput, execRoot: string, digestCache: FileDigestCache): Promise<boolean> {
  const path = join(execRoot, output.path);
  try {
    if (output.kind === 'symlink') return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true && (await readlink(path)) === output.target;
    if (output.kind === 'tree')
      return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true && sameTree(await collectTree(path, output.path, digestCache), output.tree);
    const now = await digestCache.digestIfPresent(path);
    return now !== undefined && !now.isDirectory && now.digest.hash === output.digest.hash && now.isExecutable === output.isExecutable;
  } catch {
    return false; // absent, or changed under us (an escaping link added by hand)
  }
}

/** Whether nothing is at an output's path (not even a dangling symlink). */
export function outputAbsent(output: ProducedOutput, execRoot: string): boolean {
  return lstatSync(join(execRoot, output.path), { throwIfNoEntry: false }) === undefined;
}
