import { chmod, chown, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Lets a container user (not the executor's own) create outputs anywhere in the build directory.
 * Only directories are changed: input files stay as the executor made them (read-only, shared
 * with the file cache through hard links) and need only be world-readable. As root the
 * directories are handed to the user; otherwise they become writable by everyone.
 */
export async function grantBuildDirectory(buildDirectory: string, uid: number, gid: number): Promise<void> {
  if (process.getuid?.() === uid) return;
  const asRoot = process.getuid?.() === 0;
  const visit = async (dir: string): Promise<void> => {
    if (asRoot) await chown(dir, uid, gid);
    else await chmod(dir, 0o777);
    const entries = await readdir(dir, { withFileTypes: true });
    await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => visit(join(dir, e.name))));
  };
  await visit(buildDirectory);
}
