import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { processExists } from './runners/process-exists.js';

/**
 * Removes `<prefix><pid>` (or `<prefix><pid>-<suffix>`) directories under `parent` that belong to this user and whose process no
 * longer exists: work directories named after the executor process that made them, left behind when
 * it was killed (SIGKILL gives it no chance to remove its own). Returns the paths removed.
 */
export async function removeDeadWorkDirectories(parent: string, prefix: string): Promise<string[]> {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)(?:-[A-Za-z0-9]+)?$`);
  const removed: string[] = [];
  for (const entry of await readdir(parent).catch(() => [])) {
    const m = pattern.exec(entry);
    if (!m || Number(m[1]) === process.pid || processExists(Number(m[1]))) continue;
    const path = join(parent, entry);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isDirectory() || stats.uid !== process.getuid?.()) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}
