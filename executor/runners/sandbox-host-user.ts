import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FailedPreconditionError } from '../../src/core/index.js';

/** The host user a root executor runs sandboxed actions as: nobody, which owns nothing of the executor's. */
export const SANDBOX_HOST_USER = { uid: 65534, gid: 65534 } as const;

const reachable = new Set<string>();

/**
 * Every directory above the build directory lets `user` through (search permission), or a
 * FailedPreconditionError names the one that does not: the sandbox, started as that user, must bind
 * the build directory.
 */
export async function checkReachableBy(buildDirectory: string, user: { readonly uid: number; readonly gid: number }): Promise<void> {
  const top = dirname(buildDirectory);
  if (reachable.has(top)) return;
  for (let dir = top; ; dir = dirname(dir)) {
    const stat = await lstat(dir);
    const bit = stat.uid === user.uid ? 0o100 : stat.gid === user.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) {
      throw new FailedPreconditionError(
        `the local runner runs actions as uid ${user.uid}, which cannot reach the build directories: ${dir} is not searchable by it (chmod o+x ${dir}, or use a work directory under a reachable one)`,
      );
    }
    if (dir === dirname(dir)) break;
  }
  reachable.add(top);
}
