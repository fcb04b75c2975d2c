import { statSync } from 'node:fs';
import {
  ByteReader,
  ByteWriter,
  fileStampOf,
  isRacilyStamped,
  readChecksummedFile,
  readFileStamp,
  sameFileStamp,
  writeChecksummedFile,
  writeFileStamp,
  type FileStamp,
} from '../core/index.js';

interface Entry extends FileStamp {
  readonly fingerprint: string;
}

/** The layout's name and number. */
const MAGIC = 'KILNSTMP\u0003';

/**
 * Fingerprints of loading's inputs (BUILD and .bzl files, directory listings) keyed by the stamp of
 * the file or directory they were computed from, so a cached run checks each input with one stat(2)
 * instead of reading and hashing it. Persisted as one binary file beside the package cache.
 *
 * Invariants: a fingerprint is served only when a fresh stat gives exactly the stamp taken before the
 * content was read, and never for a stamp so recent that the content may still change within the same
 * timestamp tick; what the caller says cannot be stamped (a listing with symlinks, whose targets can
 * change without touching the directory) is always computed. The file is checksummed and replaced
 * atomically (checksummed-file.ts): a torn or foreign one is an empty cache.
 */
export class InputStampCache {
  private entries: Map<string, Entry> | undefined;
  private dirty = false;

  /** `nowMs`: the wall clock (tests move it past the racy window). */
  constructor(
    private readonly file: string | undefined,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * The fingerprint of the input `id` at absolute `path`: the cached one when its stamp still holds,
   * else `compute()`, remembered when `compute` reports it stampable and the stamp is not racy.
   */
  fingerprint(id: string, path: string, compute: () => { fingerprint: string; stampable: boolean }): string {
    let st;
    try {
      st = statSync(path, { throwIfNoEntry: false });
    } catch {
      st = undefined; // ELOOP, EACCES...: computed each time, like a missing input
    }
    if (st === undefined) return compute().fingerprint;
    const stamp = fileStampOf(st);
    const entries = this.load();
    const cached = entries.get(id);
    if (cached !== undefined && sameFileStamp(cached, stamp)) return cached.fingerprint;
    const readAtMs = this.nowMs();
    const { fingerprint, stampable } = compute();
    if (stampable && !isRacilyStamped(stamp, readAtMs)) entries.set(id, { ...stamp, fingerprint });
    else if (cached !== undefined) entries.delete(id);
    else return fingerprint;
    this.dirty = true;
    return fingerprint;
  }

  /** Writes the cache when anything changed. */
  flush(): void {
    if (this.file === undefined || !this.dirty || this.entries === undefined) return;
    const w = new ByteWriter(1 << 16);
    w.uint(this.entries.size);
    for (const [id, e] of this.entries) {
      w.string(id);
      writeFileStamp(w, e);
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
        const stamp = readFileStamp(r);
        this.entries.set(id, { ...stamp, fingerprint: r.string() });
      }
    } catch {
      this.entries.clear(); // right checksum, wrong layout: every input is read once more
    }
    return this.entries;
  }
}
