import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ByteFormatError, ByteReader, ByteWriter, readChecksummedFile, writeChecksummedFile } from '../../src/core/index.js';

describe('ByteWriter and ByteReader', () => {
  it('round-trip varints up to 2^53, float64s and strings of every kind', () => {
    const uints = [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER];
    const strings = ['', 'a', '//p00/pkg00000:core', 'é', 'naïve ☃', '𝄞 clef', 'x'.repeat(5000)];
    const floats = [0.5, -1e300, Number.NaN, -0];
    const w = new ByteWriter(1);
    for (const n of uints) w.uint(n);
    for (const s of strings) w.string(s);
    for (const f of floats) w.float64(f);
    const r = new ByteReader(w.finish());
    expect(uints.map(() => r.uint())).toEqual(uints);
    expect(strings.map(() => r.string())).toEqual(strings);
    expect(floats.map(() => r.float64())).toEqual(floats);
    expect(r.done).toBe(true);
  });

  it('refuses what is no unsigned safe integer', () => {
    const w = new ByteWriter();
    for (const bad of [-1, 1.5, 2 ** 53]) expect(() => w.uint(bad)).toThrow(RangeError);
  });

  it('never reads past the end: truncated input is a ByteFormatError', () => {
    const w = new ByteWriter();
    w.string('hello');
    w.uint(2 ** 40);
    const bytes = w.finish();
    for (let end = 0; end < bytes.length; end++) {
      const r = new ByteReader(bytes, 0, end);
      expect(() => {
        r.string();
        r.uint();
      }).toThrow(ByteFormatError);
    }
    expect(() => new ByteReader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])).uint()).toThrow('varint too long');
  });
});

describe('checksummed files', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('read back what was written, and nothing from a torn, altered or foreign file', () => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-checksummed-'));
    const path = join(dir, 'a', 'cache.bin');
    writeChecksummedFile(path, 'TESTFMT1', [Buffer.from('hello '), Buffer.from('world')]);
    expect(readChecksummedFile(path, 'TESTFMT1')?.toString()).toBe('hello world');
    expect(readChecksummedFile(path, 'TESTFMT2')).toBeUndefined();
    const good = readFileSync(path);
    writeFileSync(path, good.subarray(0, good.length - 1));
    expect(readChecksummedFile(path, 'TESTFMT1')).toBeUndefined();
    const altered = Buffer.from(good);
    altered[altered.length - 1] = 'W'.charCodeAt(0);
    writeFileSync(path, altered);
    expect(readChecksummedFile(path, 'TESTFMT1')).toBeUndefined();
    expect(readChecksummedFile(join(dir, 'missing'), 'TESTFMT1')).toBeUndefined();
  });
});
