import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxSupport = { readonly available: true; readonly bwrapPath: string } | { readonly available: false; readonly reason: string };

export interface DetectSandboxOptions {
  /** A bwrap to use; otherwise $KILN_BWRAP, then `bwrap` on PATH. */
  readonly bwrapPath?: string | undefined;
  /** The environment to read KILN_BWRAP and PATH from (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const cache = new Map<string, Promise<SandboxSupport>>();

/**
 * Whether this machine can run the namespace sandbox: bwrap exists and can create every
 * namespace here (containers and some kernels forbid unprivileged user namespaces). The answer
 * per bwrap path is computed once per process.
 */
export function detectSandboxSupport(options: DetectSandboxOptions = {}): Promise<SandboxSupport> {
  const env = options.env ?? process.env;
  const bwrap = options.bwrapPath ?? env.KILN_BWRAP ?? findOnPath('bwrap', env.PATH ?? '');
  if (!bwrap) {
    return Promise.resolve({
      available: false,
      reason: 'bubblewrap (bwrap) is not installed; run scripts/test-setup.d/10-bubblewrap.sh or install the bubblewrap package',
    });
  }
  let answer = cache.get(bwrap);
  if (!answer) {
    answer = probe(bwrap);
    cache.set(bwrap, answer);
  }
  return answer;
}

function probe(bwrap: string): Promise<SandboxSupport> {
  return new Promise((resolve) => {
    execFile(bwrap, ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'], { timeout: 10_000, env: {} }, (error, _stdout, stderr) => {
      if (!error) resolve({ available: true, bwrapPath: bwrap });
      else {
        const why = String(stderr).trim() || error.message;
        resolve({ available: false, reason: `${bwrap} cannot create namespaces on this machine: ${why}` });
      }
    });
  });
}

function findOnPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
