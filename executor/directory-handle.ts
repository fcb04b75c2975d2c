import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, type FileHandle } from 'node:fs/promises';
import { FailedPreconditionError, InvalidArgumentError } from '../src/core/index.js';

// libuv opens every descriptor close-on-exec itself.
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
/** O_NONBLOCK: a FIFO put where a file was expected must not stall the executor. */
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** Errors that mean "not there as a directory or file": missing, a symlink (ELOOP), or another kind. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);
const isAbsent = (e: unknown) => ABSENT.has((e as NodeJS.ErrnoException).code ?? '');

/** One entry name: a single component that cannot climb or name its own directory. */
export function checkEntryName(name: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new InvalidArgumentError(`${where}: bad entry name ${JSON.stringify(name.slice(0, 120))}`);
  }
}

/**
 * A directory held open by descriptor, whose entries are reached without ever following a symlink:
 * `/proc/self/fd/N/name` looks `name` up in the directory of descriptor N, as openat(N, name) does,
 * and O_NOFOLLOW refuses a final symlink (ELOOP). A path is walked one component at a time from
 * such handles, so a symlink anywhere in it, or a directory swapped for one meanwhile, ends the walk
 * instead of leading outside. Node has no openat; this is its equivalent on Linux.
 */
export class DirectoryHandle {
  private constructor(
    private readonly handle: FileHandle,
    /** For messages: the path below the root this handle was opened at. */
    readonly relativePath: string,
  ) {}

  /** Opens `path` itself (an absolute host path the executor made; its last component must not be a symlink). */
  static async openRoot(path: string): Promise<DirectoryHandle> {
    const handle = new DirectoryHandle(await open(path, DIRECTORY_FLAGS), '');
    // Without /proc every entry would look absent: outputs would vanish instead of failing.
    if (!(await lstat(`/proc/self/fd/${handle.handle.fd}`).catch(() => undefined))) {
      await handle.close();
      throw new FailedPreconditionError('the executor needs /proc mounted: it opens build directory entries through /proc/self/fd');
    }
    return handle;
  }

  /** A second handle on this same directory (closed separately). */
  async reopen(): Promise<DirectoryHandle> {
    // Following the magic link itself is the point here: it is this directory, not a lookup.
    return new DirectoryHandle(await open(`/proc/self/fd/${this.handle.fd}`, O_RDONLY | O_DIRECTORY), this.relativePath);
  }

  /** The path that reaches `name` inside this directory without resolving anything above it. */
  private entryPath(name: string): string {
    checkEntryName(name, `directory ${JSON.stringify(this.relativePath || '.')}`);
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  private child(name: string): string {
    return this.relativePath === '' ? name : `${this.relativePath}/${name}`;
  }

  /** The entry's own metadata (a symlink is reported as one), or undefined when there is none. */
  async lstat(name: string): Promise<Stats | undefined> {
    return lstat(this.entryPath(name)).catch((e: unknown) => {
      if (isAbsent(e)) return undefined;
      throw e;
    });
  }

  /** The subdirectory `name`; undefined when it is missing, a symlink or not a directory. */
  async openDirectory(name: string): Promise<DirectoryHandle | undefined> {
    try {
      return new DirectoryHandle(await open(this.entryPath(name), DIRECTORY_FLAGS), this.child(name));
    } catch (e) {
      if (isAbsent(e)) return undefined;
      throw e;
    }
  }

  /** Makes the subdirectory `name` (mkdir never follows its last component) and opens it. */
  async makeDirectory(name: string, mode = 0o777): Promise<DirectoryHandle> {
    await mkdir(this.entryPath(name), mode);
    const made = await this.openDirectory(name);
    if (!made) throw new InvalidArgumentError(`${JSON.stringify(this.child(name))} changed while it was being made`);
    return made;
  }

  /** A regular file's bytes and mode; undefined when it is missing, a symlink or not a regular file. */
  async readFile(name: string): Promise<{ data: Buffer; mode: number } | undefined> {
    let file: FileHandle;
    try {
      file = await open(this.entryPath(name), FILE_FLAGS);
    } catch (e) {
      // ENXIO: a Unix socket; EWOULDBLOCK, EACCES...: nothing an action may hand back as a file.
      if (isAbsent(e) || (e as NodeJS.ErrnoException).code === 'ENXIO') return undefined;
      throw e;
    }
    try {
      const stat = await file.stat();
      if (!stat.isFile()) return undefined;
      return { data: await file.readFile(), mode: stat.mode };
    } finally {
      await file.close();
    }
  }

  /** A symlink's target, read without following it. */
  readlink(name: string): Promise<string> {
    return readlink(this.entryPath(name));
  }

  /** The entries with their types (as stored: a symlink is a symlink). */
  entries(): Promise<Dirent[]> {
    return readdir(`/proc/self/fd/${this.handle.fd}`, { withFileTypes: true });
  }

  /** The host path of an entry for calls that create it (link, symlink, mkdir never follow their last component). */
  creationPath(name: string): string {
    return this.entryPath(name);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * Walks `relativePath` (a `/`-separated path of plain components) from `root` to the directory that
 * holds its last component: each component opened with O_NOFOLLOW. Undefined when a parent is
 * missing, is a symlink or is not a directory; `create` makes missing parents instead (a symlink or
 * a file in the way is still undefined). The caller closes the returned handle (never `root`).
 */
export async function openParentBeneath(
  root: DirectoryHandle,
  relativePath: string,
  create = false,
): Promise<{ parent: DirectoryHandle; name: string } | undefined> {
  const parts = relativePath.split('/').filter((p) => p !== '' && p !== '.');
  const name = parts.pop();
  if (name === undefined) return undefined;
  let current = root;
  try {
    for (const part of parts) {
      let next = await current.openDirectory(part);
      if (!next && create && !(await current.lstat(part))) next = await current.makeDirectory(part);
      if (current !== root) await current.close();
      current = root;
      if (!next) return undefined;
      current = next;
    }
  } catch (e) {
    if (current !== root) await current.close();
    throw e;
  }
  return { parent: current, name };
}

/**
 * The directory at `relativePath` below `root` (itself for ''), reached as openParentBeneath does;
 * `create` makes it and its missing parents. Undefined when something in the way is a symlink or a
 * file. The caller closes the returned handle.
 */
export async function openDirectoryBeneath(root: DirectoryHandle, relativePath: string, create = false): Promise<DirectoryHandle | undefined> {
  const located = await openParentBeneath(root, relativePath, create);
  if (!located) return relativePath.split('/').every((p) => p === '' || p === '.') ? root.reopen() : undefined;
  const { parent, name } = located;
  try {
    const existing = await parent.openDirectory(name);
    if (existing || !create || (await parent.lstat(name))) return existing;
    return await parent.makeDirectory(name);
  } finally {
    if (parent !== root) await parent.close();
  }
}
