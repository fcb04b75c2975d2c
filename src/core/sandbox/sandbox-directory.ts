import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../process-alive.js';

/** `kiln-sandbox-<pid>-XXXXXX` (the native sandbox) and `kiln-sandbox-etc-<pid>-XXXXXX` (bubblewrap's /etc). */
const SANDBOX_DIRECTORY = /^kiln-sandbox(?:-etc)?-(\d+)-[A-Za-z0-9]{6}$/;

/**
 * A private work directory for a sandbox under the system's temporary one, named with this
 * process's pid. Directories of processes that are gone (a Kiln killed with SIGKILL cannot remove
 * its own) are removed first, so they do not pile up.
 */
export function makeSandboxDirectory(kind: 'kiln-sandbox' | 'kiln-sandbox-etc', parent: string = tmpdir()): string {
  removeOrphanedSandboxDirectories(parent);
  return mkdtempSync(join(parent, `${kind}-${process.pid}-`));
}

/**
 * Removes the sandbox directories in `parent` whose owning process no longer exists. Only real
 * directories owned by this user are touched (never a symlink, never another user's), and nothing
 * inside them is followed: removal deletes links, not what they point to.
 */
export function removeOrphanedSandboxDirectories(parent: string = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(SANDBOX_DIRECTORY.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isProcessAlive(pid)) continue;
    const path = join(parent, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat?.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Another process removing it too, or a file we may not delete: the next start tries again.
    }
  }
}
