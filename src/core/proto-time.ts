import type { wellKnown } from './proto.js';
import { InvalidArgumentError } from './status-error.js';

/**
 * Conversions between milliseconds and protobuf's `Duration` and `Timestamp`, the one copy every server
 * and client uses. Milliseconds are floored to whole nanoseconds going out and whole milliseconds coming
 * in, so a value never rounds up past a deadline; a value that does not fit a JavaScript number exactly
 * (2^53) is an error, never rounded.
 */

type Duration = wellKnown.Duration;
type Timestamp = wellKnown.Timestamp;

const MAX_NANOS = 999_999_999;

/** A `Duration` of `ms` milliseconds (negative durations carry the sign in both fields, as protobuf requires). */
export function durationFromMs(ms: number): Duration {
  if (ms < 0) {
    const { seconds, nanos } = durationFromMs(-ms);
    return { seconds: -seconds, nanos: -nanos };
  }
  return split(ms);
}

/** The `Timestamp` `ms` milliseconds after the Unix epoch (nanos are never negative, as protobuf requires). */
export function timestampFromMs(ms: number): Timestamp {
  return split(ms);
}

/** Whole milliseconds in `d` (floored); `field` names it in the error when it is malformed or too large. */
export function msFromDuration(d: Duration, field = 'duration'): number {
  if (!Number.isInteger(d.nanos) || Math.abs(d.nanos) > MAX_NANOS || (d.seconds > 0 && d.nanos < 0) || (d.seconds < 0 && d.nanos > 0)) {
    throw new InvalidArgumentError(`${field}: nanos ${d.nanos} must lie within ±999999999 and have the sign of seconds`);
  }
  return toMs(d, field);
}

/** Milliseconds since the Unix epoch of `t` (floored); `field` names it in the error when it is malformed or too large. */
export function msFromTimestamp(t: Timestamp, field = 'timestamp'): number {
  if (!Number.isInteger(t.nanos) || t.nanos < 0 || t.nanos > MAX_NANOS) {
    throw new InvalidArgumentError(`${field}: nanos ${t.nanos} must lie within 0..999999999`);
  }
  return toMs(t, field);
}

function split(ms: number): { seconds: number; nanos: number } {
  if (!Number.isFinite(ms) || Math.abs(ms) > Number.MAX_SAFE_INTEGER) throw new RangeError(`${ms} milliseconds is not a time protobuf can carry exactly`);
  const wholeMs = Math.floor(ms);
  const seconds = Math.floor(wholeMs / 1000);
  const nanos = (wholeMs - seconds * 1000) * 1_000_000 + Math.floor((ms - wholeMs) * 1_000_000);
  return { seconds, nanos };
}

function toMs(v: { seconds: number; nanos: number }, field: string): number {
  const ms = v.seconds * 1000 + Math.floor(v.nanos / 1_000_000);
  if (!Number.isSafeInteger(v.seconds) || !Number.isSafeInteger(ms)) {
    throw new InvalidArgumentError(`${field}: ${v.seconds} seconds is more milliseconds than 2^53`);
  }
  return ms;
}
