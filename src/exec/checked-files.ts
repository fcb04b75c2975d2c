import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { FileStamp } from '../core/index.js';
import type { FileDigestCache } from './file-digest-cache.js';

/** A file a build checked, by exec path, with the stamp it was found up to date with. */
export interface CheckedFile {
  readonly path: string;
  readonly stamp: FileStamp;
}

/**
 * The files the actions of a successful build read and wrote, each source input and each output once,
 * sources first (they are what changes), with the stamps the digest cache verified or recorded for
 * them in that build: while each still has its stamp, the same build would find every action up to
 * date. Undefined when that cannot be said by stamps alone: a tree or symlink output (its contents are
 * more than one stamp), or a file the digest cache did not keep (changed too recently to trust its stamp).
 */
export function checkedFiles(actions: readonly Action[], execRoot: string, digestCache: FileDigestCache): CheckedFile[] | undefined {
  const seen = new Set<string>();
  const files: CheckedFile[] = [];
  const add = (execPath: string): boolean => {
    if (seen.has(execPath)) return true;
    seen.add(execPath);
    const stamp = digestCache.stampOf(join(execRoot, execPath));
    if (!stamp) return false;
    files.push({ path: execPath, stamp });
    return true;
  };
  // Derived inputs are outputs of actions of the same build, listed with those.
  for (const action of actions) for (const input of action.inputs) if (input.kind === 'source' && !add(input.execPath)) return undefined;
  for (const action of actions) for (const output of action.outputs) if (output.type !== undefined || !add(output.execPath)) return undefined;
  return files;
}
