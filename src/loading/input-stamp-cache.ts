import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileStampOf, isRacilyStamped, sameFileStamp, type FileStamp } from '../core/index.js';

interface Entry extends FileStamp {
  readonly fingerprint: string;
}

const FORMAT_VERSION = 1;

/**
 * Fingerprints of loading's inputs (BUILD and .bzl files, directory listings) keyed by the stamp of
 * the file or directory they were computed from, so a cached run checks each input with one stat(2)
 * instead of reading and hashing it. Persisted as one JSON file beside the package cache.
 *
 * Invariants: a fingerprint is served only when a fresh stat gives exactly the stamp taken before the
 * content was read, and never for a stamp so recent that the content may still change within the same
 * timestamp tick; what the caller says cannot be stamped (a listing with symlinks, whose targets can
 * change without touching the directory) is always computed. Writes are atomic (temp file + rename).
 */
export class InputStampCache {
  private entries: Map<string, Entry> | undefined;
  private dirty = false;

  /** `nowNs`: the wall clock in nanoseconds (tests move it past the racy window). */
  constructor(
    private readonly file: string | undefined,
    private readonly nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  ) {}

  /**
   * The fingerprint of the input `id` at absolute `path`: the cached one when its stamp still holds,
   * else `compute()`, remembered when `compute` reports it stampable and the stamp is not racy.
   */
  fingerprint(id: string, path: string, compute: () => { fingerprint: string; stampable: boolean }): string {
    let st;
    try {
      st = statSync(path, { bigint: true, throwIfNoEntry: false });
    } catch {
      st = undefined; // ELOOP, EACCES...: computed each time, like a missing input
    }
    if (st === undefined) return compute().fingerprint;
    const stamp = fileStampOf(st);
    const entries = this.load();
    const cached = entries.get(id);
    if (cached !== undefined && sameFileStamp(cached, stamp)) return cached.fingerprint;
    const readAtNs = this.nowNs();
    const { fingerprint, stampable } = compute();
    if (stampable && !isRacilyStamped(stamp, readAtNs)) entries.set(id, { ...stamp, fingerprint });
    else if (cached !== undefined) entries.delete(id);
    else return fingerprint;
    this.dirty = true;
    return fingerprint;
  }

  /** Writes the cache when anything changed. */
  flush(): void {
    if (this.file === undefined || !this.dirty || this.entries === undefined) return;
    mkdirSync(dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ version: FORMAT_VERSION, entries: [...this.entries] }));
    renameSync(temp, this.file);
    this.dirty = false;
  }

  private load(): Map<string, Entry> {
    if (this.entries !== undefined) return this.entries;
    this.entries = new Map();
    if (this.file === undefined) return this.entries;
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as { version?: number; entries?: [string, Entry][] };
      if (parsed.version === FORMAT_VERSION && Array.isArray(parsed.entries)) for (const [id, e] of parsed.entries) this.entries.set(id, e);
    } catch {
      // Missing, torn by another version, or unreadable: every input is read once more.
    }
    return this.entries;
  }
}
