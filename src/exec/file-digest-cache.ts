import { readFileSync, statSync, type Stats } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { digestOf, digestOfFile, fileStampOf, RACY_WINDOW_MS, sameFileStamp, type Digest, type FileStamp } from '../core/index.js';

/** A file's digest as the cache gives it (a directory: no digest). */
export interface FileDigest {
  readonly digest: Digest;
  readonly isExecutable: boolean;
  readonly isDirectory: boolean;
}

interface Entry extends FileStamp {
  readonly hash: string;
}

const FORMAT_VERSION = 2;
/** Files up to this size are read whole and synchronously. */
const SMALL_FILE_BYTES = 256 * 1024;

/**
 * File digests keyed by absolute path and checked against size, mtime, ctime and inode, so a file
 * that did not change is never read again. Persisted as one JSON file in the output base.
 *
 * Invariants: an entry is used only when every stamp field matches a fresh stat(2) and the file was
 * last modified well before it was hashed; `save` writes atomically (temp file + rename), so a crash
 * leaves the previous cache or none, never a torn one.
 */
export class FileDigestCache {
  private readonly entries: Map<string, Entry>;
  private dirty = false;
  /** Files whose content was read and hashed (not served from the cache), for tests and statistics. */
  hashedFiles = 0;
  /** Large files being hashed, with the stamp they had when it started. */
  private readonly hashing = new Map<string, { readonly stamp: FileStamp; readonly digest: Promise<Digest> }>();

  private constructor(
    private readonly file: string | undefined,
    entries: Map<string, Entry>,
  ) {
    this.entries = entries;
  }

  /** An empty cache kept in memory only. */
  static inMemory(): FileDigestCache {
    return new FileDigestCache(undefined, new Map());
  }

  /** Loads the cache persisted at `file`; a missing or unreadable file starts an empty cache. */
  static async load(file: string): Promise<FileDigestCache> {
    const entries = new Map<string, Entry>();
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { version?: number; entries?: Record<string, Entry> };
      if (parsed.version === FORMAT_VERSION && parsed.entries) {
        for (const [path, entry] of Object.entries(parsed.entries)) entries.set(path, entry);
      }
    } catch {
      // No cache yet, or one from another version: every file is hashed once more.
    }
    return new FileDigestCache(file, entries);
  }

  /**
   * The digest of the file at absolute `path` (symlinks followed) and whether it is executable.
   * `settled`: every process that wrote the file has exited (an action's output after its process
   * tree is gone), so a recent mtime is not a race and the entry is kept.
   * @throws the stat/read error (ENOENT for a missing file) unchanged.
   */
  async digest(path: string, options: { settled?: boolean } = {}): Promise<FileDigest> {
    // A synchronous stat: a build stats every input and output, and the promise API costs several
    // times the system call itself on the main thread (a null build of 11,000 actions: 0.35 s).
    return this.digestOf(path, statSync(path), options);
  }

  /**
   * As `digest`, but undefined when nothing is at `path`: an absent output is common (after a clean),
   * and the thrown ENOENT costs more than the stat.
   */
  async digestIfPresent(path: string): Promise<FileDigest | undefined> {
    const st = statSync(path, { throwIfNoEntry: false });
    return st && this.digestOf(path, st, {});
  }

  private async digestOf(path: string, st: Stats, options: { settled?: boolean }): Promise<FileDigest> {
    const isExecutable = (st.mode & 0o111) !== 0;
    if (st.isDirectory()) return { digest: { hash: '', sizeBytes: 0 }, isExecutable, isDirectory: true };
    const stamp = fileStampOf(st);
    const cached = this.entries.get(path);
    if (cached && sameFileStamp(cached, stamp)) {
      return { digest: { hash: cached.hash, sizeBytes: cached.size }, isExecutable, isDirectory: false };
    }
    const hashedAtMs = Date.now();
    // Most inputs and outputs are small: one synchronous read costs less than the open, read and
    // close round trips of the streaming reader, which large files keep.
    const digest = stamp.size <= SMALL_FILE_BYTES ? this.hashSmall(path) : await this.hashLarge(path, stamp);
    if (digest.sizeBytes === stamp.size) this.record(path, stamp, digest, options.settled ? undefined : hashedAtMs);
    return { digest, isExecutable, isDirectory: false };
  }

  private hashSmall(path: string): Digest {
    this.hashedFiles++;
    return digestOf(readFileSync(path));
  }

  /**
   * A large file is read once however many actions ask for it at the same time (a tool every action
   * of a cold build lists), while it is unchanged.
   */
  private hashLarge(path: string, stamp: FileStamp): Promise<Digest> {
    const running = this.hashing.get(path);
    if (running && sameFileStamp(running.stamp, stamp)) return running.digest;
    this.hashedFiles++;
    const digest = digestOfFile(path).finally(() => {
      if (this.hashing.get(path)?.digest === digest) this.hashing.delete(path);
    });
    this.hashing.set(path, { stamp, digest });
    return digest;
  }

  /**
   * Records the digest of a file Kiln itself just wrote with known content (an output restored from
   * a cache), so the next build need not read it. Nothing else writes it, so it is settled.
   */
  async remember(path: string, digest: Digest): Promise<void> {
    const st = statSync(path);
    if (st.size !== digest.sizeBytes) return;
    this.record(path, fileStampOf(st), digest, undefined);
  }

  /** The stamp the entry of `path` was taken with (as last verified or recorded), if there is one. */
  stampOf(path: string): FileStamp | undefined {
    return this.entries.get(path);
  }

  forget(path: string): void {
    if (this.entries.delete(path)) this.dirty = true;
  }

  /** Writes the cache back to its file if anything changed. */
  async save(): Promise<void> {
    if (!this.file || !this.dirty) return;
    await mkdir(dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify({ version: FORMAT_VERSION, entries: Object.fromEntries(this.entries) }));
    await rename(temp, this.file);
    this.dirty = false;
  }

  /** `hashedAtMs` undefined: the file is settled and cannot be racily clean. */
  private record(path: string, stamp: FileStamp, digest: Digest, hashedAtMs: number | undefined): void {
    if (hashedAtMs !== undefined && stamp.mtimeMs + RACY_WINDOW_MS > hashedAtMs) {
      // Racily clean (the file may change again within one timestamp tick): do not trust the stamp next time.
      if (this.entries.delete(path)) this.dirty = true;
      return;
    }
    this.entries.set(path, { ...stamp, hash: digest.hash });
    this.dirty = true;
  }
}
