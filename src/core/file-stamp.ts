import type { Stats } from 'node:fs';
import type { ByteReader, ByteWriter } from './byte-codec.js';

/**
 * What identifies one version of a file or directory without reading it: size, modification and
 * change times, and inode. Any write changes ctime, which no user call can set back.
 *
 * The times are stat(2)'s as Node gives them in milliseconds (a double: a few hundred nanoseconds of
 * resolution at today's dates). That is enough: a change within the same fraction of a microsecond is
 * a change within the racy window below, whose stamps are never trusted. A BigInt stat would keep
 * every nanosecond at four times the allocation per call, and a cached query or null build stats
 * thousands of files.
 */
export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly ctimeMs: number;
}

/**
 * A file modified this close to the moment it was read may change again within the same kernel
 * timestamp tick (4-10 ms) without its stamp changing ("racily clean", as git calls it); a stamp that
 * recent must not stand for the content read.
 */
export const RACY_WINDOW_MS = 50;

/** The stamp of `st`; inode numbers above 2^53 are rounded, alike on every side that compares them. */
export function fileStampOf(st: Stats): FileStamp {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs };
}

export function sameFileStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs;
}

/** Whether content read at `readAtMs` (wall clock) may differ from what `stamp` names. */
export function isRacilyStamped(stamp: FileStamp, readAtMs: number): boolean {
  return stamp.mtimeMs + RACY_WINDOW_MS > readAtMs || stamp.ctimeMs + RACY_WINDOW_MS > readAtMs;
}

/** Writes `stamp` for readFileStamp, in the binary caches that keep stamps. */
export function writeFileStamp(w: ByteWriter, stamp: FileStamp): void {
  w.uint(stamp.size);
  w.float64(stamp.mtimeMs);
  w.float64(stamp.ino); // inode numbers may exceed 2^53 (as stat(2) gives them, rounded alike)
  w.float64(stamp.ctimeMs);
}

export function readFileStamp(r: ByteReader): FileStamp {
  const size = r.uint();
  const mtimeMs = r.float64();
  const ino = r.float64();
  return { size, mtimeMs, ino, ctimeMs: r.float64() };
}
