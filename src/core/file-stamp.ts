import type { BigIntStats } from 'node:fs';

/**
 * What identifies one version of a file or directory without reading it: size, modification and
 * change times in nanoseconds, and inode. Any write changes ctime, which no user call can set back.
 */
export interface FileStamp {
  readonly size: number;
  readonly mtimeNs: string;
  readonly ino: number;
  readonly ctimeNs: string;
}

/**
 * A file modified this close to the moment it was read may change again within the same kernel
 * timestamp tick (4-10 ms) without its stamp changing ("racily clean", as git calls it); a stamp that
 * recent must not stand for the content read.
 */
export const RACY_WINDOW_NS = 50_000_000n;

export function fileStampOf(st: BigIntStats): FileStamp {
  return { size: Number(st.size), mtimeNs: st.mtimeNs.toString(), ino: Number(st.ino), ctimeNs: st.ctimeNs.toString() };
}

export function sameFileStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ino === b.ino && a.ctimeNs === b.ctimeNs;
}

/** Whether content read at `readAtNs` (wall clock, ns) may differ from what `stamp` names. */
export function isRacilyStamped(stamp: FileStamp, readAtNs: bigint): boolean {
  return BigInt(stamp.mtimeNs) + RACY_WINDOW_NS > readAtNs || BigInt(stamp.ctimeNs) + RACY_WINDOW_NS > readAtNs;
}
