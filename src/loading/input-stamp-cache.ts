import { ByteReader, ByteWriter, isRacilyStamped, readChecksummedFile, sameFileStamp, writeChecksummedFile, type FileStamp } from '../core/index.js';
import { StatSnapshot } from './stat-snapshot.js';

interface Entry extends FileStamp {
  readonly fingerprint: string;
}

/** The layout's name and number. */
const MAGIC = 'KILNSTMP\u0002';

/**
 * Fingerprints of loading's inputs (BUILD and .bzl files, directory listings), or the listings
 * themselves, keyed by the stamp of the file or directory they were computed from, so a cached run
 * checks each input with one stat(2) instead of reading and hashing it, and walks `//...` with a stat
 * per directory instead of a read. Persisted as one binary file beside the package cache.
 *
 * Invariants: a fingerprint is served only when a fresh stat gives exactly the stamp taken before the
 * content was read, and never for a stamp so recent that the content may still change within the same
 * timestamp tick; what the caller says cannot be stamped (a listing with symlinks, whose targets can
 * change without touching the directory) is always computed. The file is checksummed and replaced
 * atomically (checksummed-file.ts): a torn or foreign one is an empty cache.
 *
 * Stamps come from the run's StatSnapshot (one stat per path and run, shared with the listings' cache).
 */
export class InputStampCache {
  private entries: Map<string, Entry> | undefined;
  private dirty = false;

  /** `nowNs`: the wall clock in nanoseconds (tests move it past the racy window). */
  constructor(
    private readonly file: string | undefined,
    nowNs?: () => bigint,
    private readonly snapshot: StatSnapshot = new StatSnapshot(nowNs),
  ) {}

  /**
   * The fingerprint of the input `id` at absolute `path`: the cached one when its stamp still holds,
   * else `compute()`, remembered when `compute` reports it stampable and the stamp is not racy.
   */
  fingerprint(id: string, path: string, compute: () => { fingerprint: string; stampable: boolean }): string {
    const { stamp, atNs } = this.snapshot.stat(path);
    if (stamp === undefined) return compute().fingerprint;
    const entries = this.load();
    const cached = entries.get(id);
    if (cached !== undefined && sameFileStamp(cached, stamp)) return cached.fingerprint;
    const { fingerprint, stampable } = compute();
    // The racy check takes the stat's time: whatever compute() read, it read no earlier than that.
    if (stampable && !isRacilyStamped(stamp, atNs)) entries.set(id, { ...stamp, fingerprint });
    else if (cached !== undefined) entries.delete(id);
    else return fingerprint;
    this.dirty = true;
    return fingerprint;
  }

  /**
   * A directory's listing as text (see directory-lister.ts): the recorded one while the directory's
   * stamp holds, else `read()`, recorded when stampable. Serves DirectoryLister as its ListingStore.
   */
  listing(absDir: string, read: () => { listing: string; stampable: boolean }): string {
    return this.fingerprint(`ls:${absDir}`, absDir, () => {
      const { listing, stampable } = read();
      return { fingerprint: listing, stampable };
    });
  }

  /** Writes the cache when anything changed. */
  flush(): void {
    if (this.file === undefined || !this.dirty || this.entries === undefined) return;
    const w = new ByteWriter(1 << 16);
    w.uint(this.entries.size);
    for (const [id, e] of this.entries) {
      w.string(id);
      w.uint(e.size);
      w.string(e.mtimeNs);
      w.float64(e.ino); // inode numbers may exceed 2^53 (as stat(2) gives them, rounded alike)
      w.string(e.ctimeNs);
      w.string(e.fingerprint);
    }
    writeChecksummedFile(this.file, MAGIC, [w.finish()]);
    this.dirty = false;
  }

  private load(): Map<string, Entry> {
    if (this.entries !== undefined) return this.entries;
    this.entries = new Map();
    const bytes = this.file === undefined ? undefined : readChecksummedFile(this.file, MAGIC);
    if (bytes === undefined) return this.entries;
    try {
      const r = new ByteReader(bytes);
      for (let n = r.uint(); n > 0; n--) {
        const id = r.string();
        const size = r.uint();
        const mtimeNs = r.string();
        const ino = r.float64();
        const ctimeNs = r.string();
        this.entries.set(id, { size, mtimeNs, ino, ctimeNs, fingerprint: r.string() });
      }
    } catch {
      this.entries.clear(); // right checksum, wrong layout: every input is read once more
    }
    return this.entries;
  }
}
