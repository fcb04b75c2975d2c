import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationFromMs, InvalidArgumentError, msFromDuration, msFromTimestamp, timestampFromMs } from '../../src/core/index.js';

describe('durations and timestamps', () => {
  it('splits milliseconds into whole seconds and nanos, flooring fractions of a nanosecond', () => {
    expect(durationFromMs(1500)).toEqual({ seconds: 1, nanos: 500_000_000 });
    expect(durationFromMs(0.0000015)).toEqual({ seconds: 0, nanos: 1 });
    expect(timestampFromMs(1_700_000_000_123.75)).toEqual({ seconds: 1_700_000_000, nanos: 123_750_000 });
    expect(durationFromMs(0.0000019)).toEqual({ seconds: 0, nanos: 1 });
    for (const v of [durationFromMs(2.5), timestampFromMs(2.5)]) expect(Number.isInteger(v.nanos)).toBe(true);
  });

  it('keeps the sign rules: a negative duration negates both fields, a timestamp before 1970 has non-negative nanos', () => {
    expect(durationFromMs(-1500)).toEqual({ seconds: -1, nanos: -500_000_000 });
    expect(timestampFromMs(-1500)).toEqual({ seconds: -2, nanos: 500_000_000 });
    expect(msFromTimestamp({ seconds: -2, nanos: 500_000_000 })).toBe(-1500);
    expect(msFromDuration({ seconds: -1, nanos: -500_000_000 })).toBe(-1500);
  });

  it('floors to whole milliseconds coming in, so a deadline is never rounded up', () => {
    expect(msFromDuration({ seconds: 0, nanos: 999_999 })).toBe(0);
    expect(msFromDuration({ seconds: 1, nanos: 1_999_999 })).toBe(1001);
    expect(msFromTimestamp({ seconds: 1, nanos: 999_999_999 })).toBe(1999);
  });

  it('round-trips whole milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), (ms) => {
        expect(msFromDuration(durationFromMs(ms))).toBe(ms);
        expect(msFromTimestamp(timestampFromMs(ms))).toBe(ms);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects a value above 2^53 milliseconds instead of rounding it, naming the field', () => {
    const tooMany = { seconds: Math.floor(Number.MAX_SAFE_INTEGER / 1000) + 1, nanos: 0 };
    expect(() => msFromDuration(tooMany, 'Action.timeout')).toThrow(InvalidArgumentError);
    expect(() => msFromDuration(tooMany, 'Action.timeout')).toThrow(/^Action\.timeout: .*2\^53/);
    expect(() => msFromTimestamp(tooMany)).toThrow(/^timestamp: .*2\^53/);
    expect(msFromDuration({ seconds: Math.floor(Number.MAX_SAFE_INTEGER / 1000) - 1, nanos: 0 })).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(() => durationFromMs(2 ** 53)).toThrow(RangeError);
    expect(() => timestampFromMs(Number.NaN)).toThrow(RangeError);
  });

  it('rejects nanos out of range or against the sign of seconds', () => {
    expect(() => msFromDuration({ seconds: 0, nanos: 1_000_000_000 }, 'd')).toThrow(/^d: nanos/);
    expect(() => msFromDuration({ seconds: 1, nanos: -1 }, 'd')).toThrow(/^d: nanos/);
    expect(() => msFromTimestamp({ seconds: 1, nanos: -1 }, 't')).toThrow(/^t: nanos/);
  });
});
