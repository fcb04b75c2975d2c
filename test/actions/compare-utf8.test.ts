import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareUtf8 } from '../../src/actions/index.js';

const sign = (n: number) => Math.sign(n);

describe('compareUtf8', () => {
  it('orders strings exactly as their UTF-8 bytes (REAPI canonical order), surrogate pairs included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(sign(compareUtf8(a, b))).toBe(sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
      }),
      { numRuns: 2000 },
    );
  });

  it('puts a code point above U+FFFF after U+E000-U+FFFF, where UTF-16 order would not', () => {
    expect(compareUtf8('\u{1F600}', '\uFFFD')).toBeGreaterThan(0);
    expect(compareUtf8('a\uE000', 'a\u{10000}')).toBeLessThan(0);
    expect(compareUtf8('ab', 'abc')).toBeLessThan(0);
    expect(compareUtf8('same', 'same')).toBe(0);
  });
});
