import { describe, expect, it } from 'vitest';
import { reapi } from '../../../src/core/index.js';

/** A Digest on the wire: hash (field 1, string) and size_bytes (field 2, varint) given as a bigint. */
function digestBytes(size: bigint): Buffer {
  const varint: number[] = [];
  let v = BigInt.asUintN(64, size);
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    varint.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return Buffer.from([0x0a, 0x01, 0x61, 0x10, ...varint]);
}

describe('64-bit integers', () => {
  it('decode exactly up to 2^53 - 1', () => {
    expect(reapi.Digest.decode(digestBytes(2n ** 53n - 1n)).sizeBytes).toBe(Number.MAX_SAFE_INTEGER);
    expect(reapi.Digest.decode(reapi.Digest.encode({ hash: 'a', sizeBytes: Number.MAX_SAFE_INTEGER })).sizeBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('are an error above that, never rounded, on decode and on encode', () => {
    for (const size of [2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 60n)]) {
      expect(() => reapi.Digest.decode(digestBytes(size)), String(size)).toThrow(/beyond 2\^53 and cannot be represented exactly/);
    }
    expect(() => reapi.Digest.encode({ hash: 'a', sizeBytes: 2 ** 53 })).toThrow(/int64 value 9007199254740992 is beyond 2\^53/);
  });
});
