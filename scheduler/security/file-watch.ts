import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** A change burst (an editor's write, a rename into place) settles within this before the files are read again. */
const SETTLE_MS = 50;

/**
 * Calls `changed` after any of `files` changes. It watches their directories, not the files: a
 * certificate rotated by renaming a new file into place (cert-manager, Kubernetes secrets, `mv`) is a
 * new inode a watch on the old file would never report. Watchers never keep the process alive.
 * @returns stops watching
 */
export function watchFiles(files: readonly string[], changed: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const settle = () => {
    clearTimeout(timer);
    timer = setTimeout(changed, SETTLE_MS);
    timer.unref();
  };
  const names = new Set(files.map((f) => basename(f)));
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((f) => dirname(f)))) {
    try {
      // Kubernetes swaps a `..data` symlink rather than the named files: any entry counts.
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(name) || name.startsWith('..')) settle();
      });
      watcher.on('error', () => watcher.close());
      watchers.push(watcher);
    } catch {
      // A directory that cannot be watched: the explicit reload hook still works.
    }
  }
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
