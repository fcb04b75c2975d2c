import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where a file is written before it is renamed over `path`: beside it, so the rename stays on one file system. */
export function temporaryPathBeside(path: string): string {
  return `${path}.kiln-download-${process.pid}`;
}

/**
 * Writes one file atomically with synchronous calls: the bytes to a temporary name beside it, its
 * mode, then a rename over whatever is at the path (a directory there is removed first). The parent
 * directory is created only when the first write says it is missing: one call less per file.
 */
export function writeFileAtomicallySync(path: string, data: Uint8Array, mode: number): void {
  const temp = temporaryPathBeside(path);
  try {
    writeFileSync(temp, data);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temp, data);
  }
  chmodSync(temp, mode); // not writeFile's mode: the umask would narrow it
  try {
    renameSync(temp, path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    rmSync(path, { recursive: true, force: true });
    renameSync(temp, path);
  }
}
