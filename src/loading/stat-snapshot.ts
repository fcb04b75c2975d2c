import { statSync } from 'node:fs';
import { fileStampOf, type FileStamp } from '../core/index.js';

/** One stat(2) of a path in this run, and when it was taken (content read after it is no older). */
export interface SnapshotStat {
  /** Undefined when the path does not exist or cannot be stat'ed (ELOOP, EACCES...). */
  readonly stamp: FileStamp | undefined;
  readonly atNs: bigint;
}

/**
 * The stamps of the paths one run looked at, each stat'ed once: a run sees its inputs as one snapshot
 * (as the loader's per-run fingerprints and listings do), so a directory's listing and its fingerprint
 * share one stat, taken before either was read.
 */
export class StatSnapshot {
  private readonly stats = new Map<string, SnapshotStat>();

  /** `nowNs`: the wall clock in nanoseconds (tests move it past the racy window). */
  constructor(private readonly nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n) {}

  stat(path: string): SnapshotStat {
    let run = this.stats.get(path);
    if (run === undefined) {
      const atNs = this.nowNs();
      let st;
      try {
        st = statSync(path, { bigint: true, throwIfNoEntry: false });
      } catch {
        st = undefined;
      }
      run = { stamp: st === undefined ? undefined : fileStampOf(st), atNs };
      this.stats.set(path, run);
    }
    return run;
  }
}
