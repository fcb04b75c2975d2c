import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];

export interface HostUser {
  readonly uid: number;
  readonly gid: number;
}

/**
 * Whether bwrap can start as `user` here (util-linux's setpriv switches to it; the kernel must let
 * that user create namespaces): the user with setpriv's path, for BubblewrapProcessRunner's
 * `hostUser`, or why not.
 */
export function probeHostUser(bwrapPath: string, user: HostUser): Promise<(HostUser & { setprivPath: string }) | { reason: string }> {
  const setprivPath = SETPRIV_PATHS.find((p) => existsSync(p));
  if (!setprivPath) return Promise.resolve({ reason: 'setpriv (util-linux) is not installed' });
  const { uid, gid } = user;
  const argv = [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', bwrapPath, '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'];
  return new Promise((resolve) => {
    execFile(setprivPath, argv, { timeout: 10_000, env: {}, cwd: '/' }, (error, _stdout, stderr) => {
      if (!error) resolve({ uid, gid, setprivPath });
      else resolve({ reason: `bwrap cannot run as uid ${uid}: ${String(stderr).trim() || error.message}` });
    });
  });
}
