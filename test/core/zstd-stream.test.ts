import { describe, expect, it } from 'vitest';
import { zstdCompress, zstdDecompressBounded, ZstdCompressor, ZstdDecompressor } from '../../src/core/index.js';

describe('zstd streams', () => {
  it("round-trip blobs whose size is an exact multiple of the decoder's output buffer", () => {
    for (const size of [0, 1, 131071, 131072, 131073, 4 * 131072, 1 << 22]) {
      const data = Buffer.alloc(size, 'compressible ');
      expect(zstdDecompressBounded(zstdCompress(data), size, 'test').equals(data), String(size)).toBe(true);
    }
  });

  it('round-trip when the compressed data arrives one byte at a time', () => {
    const data = Buffer.alloc(3 * 131072, 'abc');
    const encoder = new ZstdCompressor();
    const compressed = Buffer.concat([...encoder.push(data), ...encoder.finish()]);
    const decoder = new ZstdDecompressor(data.length, 'test');
    const out: Buffer[] = [];
    for (let i = 0; i < compressed.length; i++) out.push(...decoder.push(compressed.subarray(i, i + 1)));
    decoder.finish();
    expect(Buffer.concat(out).equals(data)).toBe(true);
  });

  it('refuses a truncated frame and output beyond the bound', () => {
    const data = Buffer.alloc(300_000, 'x');
    const compressed = zstdCompress(data);
    expect(() => zstdDecompressBounded(compressed.subarray(0, compressed.length - 3), data.length, 'blob')).toThrow(
      /blob: zstd data ends in the middle of a frame/,
    );
    expect(() => zstdDecompressBounded(compressed, data.length - 1, 'blob')).toThrow(/decompresses to more than/);
  });
});
