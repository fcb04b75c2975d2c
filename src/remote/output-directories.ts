import { lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The directories below `root` that one call writes outputs into, each made or checked once, one
 * component at a time, never through a symlink: a component that is a symlink or a file (a planted
 * link, an earlier build's output of another kind) is removed, without following it, and replaced by
 * a real directory. So a path built from a result's output names stays below `root` however the
 * execroot looked before.
 *
 * lstat per component rather than a descriptor walk (openat through /proc/self/fd, as the executor's
 * DirectoryHandle does): what we guard against is what a server or cache entry says, and it acts only
 * through what Kiln writes. Kiln writes symlinks last and only at declared symlink paths, so within a
 * result nothing turns a checked directory into a link before the writes below it are done; another
 * action could only if its declared symlink were a parent of this action's outputs, a conflict of the
 * BUILD files (Bazel refuses it in analysis), not something a server can arrange. A local process
 * racing us could write the source tree itself anyway. The cost is one lstat per directory per call
 * (a few per action), no descriptors.
 */
export class OutputDirectories {
  /** Relative directory → its check; 'made' when this call created it (its entries are all ours). */
  private readonly ready = new Map<string, Promise<'found' | 'made'>>();

  constructor(private readonly root: string) {}

  /** Makes `path`'s parent directory (and its own parents) real directories below the root. */
  async parentOf(path: string): Promise<void> {
    const slash = path.lastIndexOf('/');
    if (slash > 0) await this.directory(path.slice(0, slash));
  }

  /** Replaces whatever is at `path` (a file, a symlink, an old tree) with a new empty directory: a tree artifact's root. */
  async freshDirectory(path: string): Promise<void> {
    await this.parentOf(path);
    await rm(join(this.root, path), { recursive: true, force: true }); // unlinks a symlink, never follows one
    await mkdir(join(this.root, path));
    this.ready.set(path, Promise.resolve('made'));
  }

  /** Makes `path` (relative, clean) a real directory, with its parents. */
  directory(path: string): Promise<'found' | 'made'> {
    let pending = this.ready.get(path);
    if (!pending) {
      pending = this.make(path);
      this.ready.set(path, pending);
    }
    return pending;
  }

  private async make(path: string): Promise<'found' | 'made'> {
    const slash = path.lastIndexOf('/');
    const parent = slash > 0 ? await this.directory(path.slice(0, slash)) : 'found';
    const at = join(this.root, path);
    // Below a directory this call made, nothing is there but what it made.
    if (parent === 'found') {
      const found = await lstat(at).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return undefined;
        throw e;
      });
      if (found?.isDirectory()) return 'found';
      if (found) await rm(at, { recursive: true, force: true });
    }
    try {
      await mkdir(at); // never follows its last component
    } catch (e) {
      // Another action's call made it meanwhile: fine if it is a directory (lstat: not a link to one).
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !(await lstat(at)).isDirectory()) throw e;
      return 'found';
    }
    return 'made';
  }
}
