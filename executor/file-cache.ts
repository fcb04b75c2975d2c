import { randomUUID } from 'node:crypto';
import { constants, linkSync } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { digestOfFile, InternalError, type Digest } from '../src/core/index.js';

/**
 * How input files reach a build directory: `link`, a hard link to the cached file (its owner is the
 * executor and it is read-only: safe only when actions run as another user without capabilities);
 * `copy`, a copy of it (actions run as the executor's user, which could chmod and rewrite a shared
 * inode, but cannot reach the cache itself); `verified-copy`, a copy made after checking the cached
 * file against its digest (actions are plain processes that could have rewritten the cache).
 */
export type InputHandOut = 'link' | 'copy' | 'verified-copy';

/** Fetches one blob from the CAS into a new file. */
export type BlobDownloader = (digest: Digest, path: string) => Promise<void>;

/**
 * The executor's local content-addressed file cache: each input file is downloaded once, verified
 * against its digest, made read-only and handed to build directories as hard links or copies (InputHandOut). Executable and plain
 * copies are separate entries, since a hard link shares its mode. Bounded by total size; the least
 * recently linked entries are removed first (build directories keep their links, so eviction never
 * breaks a running action).
 */
export class FileCache {
  /** key -> size; the Map's order is recency (oldest first). */
  private readonly entries = new Map<string, number>();
  private readonly inProgress = new Map<string, Promise<void>>();
  private totalBytes = 0;

  private constructor(
    private readonly root: string,
    private readonly maxBytes: number,
    private readonly download: BlobDownloader,
  ) {}

  /** Starts empty at `root` (anything there from an earlier run is removed). */
  static async open(root: string, maxBytes: number, download: BlobDownloader): Promise<FileCache> {
    await rm(root, { recursive: true, force: true });
    await mkdir(join(root, 'tmp'), { recursive: true });
    return new FileCache(root, maxBytes, download);
  }

  get sizeBytes(): number {
    return this.totalBytes;
  }

  get entryCount(): number {
    return this.entries.size;
  }

  /** Makes `dest` the input file `digest` as `mode` says (see InputHandOut); `dest` must not exist. */
  async handOut(digest: Digest, executable: boolean, dest: string, mode: InputHandOut): Promise<void> {
    if (mode === 'link') return this.linkInto(digest, executable, dest);
    const key = this.keyOf(digest, executable);
    for (let attempt = 0; ; attempt++) {
      await this.ensure(key, digest, executable);
      this.touch(key);
      const cached = join(this.root, key);
      try {
        if (mode === 'verified-copy') {
          const actual = await digestOfFile(cached);
          if (actual.hash !== digest.hash || actual.sizeBytes !== digest.sizeBytes) {
            // Changed since it was verified: dropped, and fetched again once.
            this.drop(key);
            await unlink(cached).catch(() => {});
            if (attempt > 0) throw new InternalError(`cached input ${digest.hash}/${digest.sizeBytes} changed twice after verification`);
            continue;
          }
        }
        // EXCL: never through a symlink at dest; FICLONE: a copy-on-write clone where the file
        // system has them (btrfs, XFS), else a plain copy. It takes the cached file's read-only mode.
        await copyFile(cached, dest, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0 || this.entries.has(key)) throw e;
      }
    }
  }

  private keyOf(digest: Digest, executable: boolean): string {
    return `${digest.hash}-${digest.sizeBytes}${executable ? '-x' : ''}`;
  }

  private drop(key: string): void {
    const size = this.entries.get(key);
    if (size === undefined) return;
    this.entries.delete(key);
    this.totalBytes -= size;
  }

  /** Makes `dest` a hard link to the cached copy of the blob, downloading it first if needed. */
  async linkInto(digest: Digest, executable: boolean, dest: string): Promise<void> {
    const key = this.keyOf(digest, executable);
    for (let attempt = 0; ; attempt++) {
      await this.ensure(key, digest, executable);
      this.touch(key);
      try {
        linkSync(join(this.root, key), dest); // one short call: cheaper than a thread-pool round trip
        return;
      } catch (e) {
        // Evicted between ensure and link by a concurrent insertion: fetch it again once.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0 || this.entries.has(key)) throw e;
      }
    }
  }

  private touch(key: string): void {
    const size = this.entries.get(key);
    if (size === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, size);
  }

  private ensure(key: string, digest: Digest, executable: boolean): Promise<void> {
    if (this.entries.has(key)) return Promise.resolve();
    let pending = this.inProgress.get(key);
    if (!pending) {
      pending = this.insert(key, digest, executable).finally(() => this.inProgress.delete(key));
      this.inProgress.set(key, pending);
    }
    return pending;
  }

  private async insert(key: string, digest: Digest, executable: boolean): Promise<void> {
    const tmp = join(this.root, 'tmp', randomUUID());
    try {
      await this.download(digest, tmp);
      const actual = await digestOfFile(tmp);
      if (actual.hash !== digest.hash || actual.sizeBytes !== digest.sizeBytes) {
        throw new InternalError(`blob ${digest.hash}/${digest.sizeBytes} arrived with different content (${actual.hash}/${actual.sizeBytes})`);
      }
      await chmod(tmp, executable ? 0o555 : 0o444);
      await rename(tmp, join(this.root, key));
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    this.entries.set(key, digest.sizeBytes);
    this.totalBytes += digest.sizeBytes;
    await this.evict(key);
  }

  private async evict(keep: string): Promise<void> {
    for (const [key, size] of this.entries) {
      if (this.totalBytes <= this.maxBytes) break;
      if (key === keep) continue;
      this.entries.delete(key);
      this.totalBytes -= size;
      await unlink(join(this.root, key)).catch(() => {});
    }
  }
}
