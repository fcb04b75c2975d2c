import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** Whether this machine can run sandboxed actions, and with which bubblewrap binary. */
export type SandboxSupport = { readonly available: true; readonly bwrap: string } | { readonly available: false; readonly reason: string };

/**
 * Finds bubblewrap (`$KILN_BWRAP`, else `bwrap` on PATH) and checks that it can create the
 * namespaces the sandbox needs (user, mount, pid, network) by running `true` inside them once.
 */
export async function detectSandboxSupport(env: Readonly<Record<string, string | undefined>> = process.env): Promise<SandboxSupport> {
  if (process.platform !== 'linux') return { available: false, reason: `the sandbox needs Linux namespaces; this is ${process.platform}` };
  const bwrap = env.KILN_BWRAP || (await findOnPath('bwrap', env.PATH ?? ''));
  if (!bwrap) return { available: false, reason: 'bubblewrap (bwrap) is not installed; run scripts/test-setup.d/10-bubblewrap.sh or install the bubblewrap package' };
  const probe = await new Promise<string | undefined>((resolve) => {
    execFile(bwrap, ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'], (error, _out, stderr) =>
      resolve(error ? (String(stderr).trim() || error.message) : undefined),
    );
  });
  if (probe !== undefined) return { available: false, reason: `${bwrap} cannot create namespaces here: ${probe}` };
  return { available: true, bwrap };
}

async function findOnPath(program: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
