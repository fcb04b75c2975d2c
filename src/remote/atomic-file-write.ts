import { chmodSync, closeSync, constants, openSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';

/** Where a file is written before it is renamed over `path`: beside it, so the rename stays on one file system. */
export function temporaryPathBeside(path: string): string {
  return `${path}.kiln-download-${process.pid}`;
}

/**
 * Writes one file atomically with synchronous calls: the bytes to a new temporary name beside it
 * (O_EXCL: never through a symlink there; a stale one a crash left is removed first), its mode, then
 * a rename over whatever is at the path (a directory there is removed first; a symlink there is
 * replaced, not followed). The parent directory must exist: the caller makes it without following
 * links (OutputDirectories).
 */
export function writeFileAtomicallySync(path: string, data: Uint8Array, mode: number): void {
  const temp = temporaryPathBeside(path);
  let fd: number;
  try {
    fd = openSync(temp, EXCLUSIVE, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    unlinkSync(temp);
    fd = openSync(temp, EXCLUSIVE, 0o600);
  }
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
  chmodSync(temp, mode); // not writeFile's mode: the umask would narrow it
  renameOverSync(temp, path);
}

/** Renames `temp` over `path`, removing a directory at `path` first (rename cannot replace one). */
export function renameOverSync(temp: string, path: string): void {
  try {
    renameSync(temp, path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    rmSync(path, { recursive: true, force: true });
    renameSync(temp, path);
  }
}

const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
