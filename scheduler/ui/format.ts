import { msFromTimestamp, type wellKnown } from '../../src/core/index.js';

/** `2026-12-04 19:02:03 UTC`: one zone for every reader of a shared page. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return '';
  return `${new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} UTC`;
}

/** `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A Timestamp of a message in ms; undefined when unset or not representable. */
export function timestampMs(timestamp: wellKnown.Timestamp | null | undefined): number | undefined {
  if (!timestamp) return undefined;
  try {
    const ms = msFromTimestamp(timestamp);
    return ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

/** The time between two Timestamps, when both are set. */
export function between(start: wellKnown.Timestamp | null | undefined, end: wellKnown.Timestamp | null | undefined): number | undefined {
  const a = timestampMs(start);
  const b = timestampMs(end);
  return a === undefined || b === undefined ? undefined : b - a;
}

/** A POSIX shell word for `text` (quoted when it needs to be). */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
