import { createHash } from 'node:crypto';

/**
 * FastCDC 2020 content-defined chunking (Xia et al., "The Design of Fast Content-Defined Chunking
 * for Data Deduplication Based Storage Systems", 2020) exactly as REAPI's FastCdc2020Params defines it:
 * - the Gear table holds, for i in 0..255, the high 64 bits (big-endian) of MD5 over 64 bytes of value i,
 *   each XORed with the seed;
 * - normalization level 2: up to the average size a cut needs the mask with log2(avg)+2 bits set,
 *   after it the mask with log2(avg)-2 bits (the spread-bit masks of the C reference implementation);
 * - min = avg / 4 and max = avg * 4; bytes before min are not hashed; a cut at byte j (the hash after
 *   adding byte j matches) ends the chunk before j, as the reference implementations do.
 * The result matches REAPI's fastcdc2020_test_vectors.txt.
 *
 * 64-bit hash arithmetic is done on two 32-bit halves: plain numbers, no BigInt in the hot loop.
 */

/** Masks by number of effective bits (index = log2 of the target size); [high 32 bits, low 32 bits]. */
const MASKS: readonly (readonly [number, number])[] = [
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0, 0],
  [0x00000000, 0x01804110], // 5
  [0x00000000, 0x01803110], // 6: 64 B
  [0x00000000, 0x18035100], // 7
  [0x00000018, 0x00035300], // 8
  [0x00000190, 0x00353000], // 9
  [0x00005900, 0x03530000], // 10: 1 KiB
  [0x0000d900, 0x03530000], // 11
  [0x0000d901, 0x03530000], // 12
  [0x0000d903, 0x03530000], // 13
  [0x0000d903, 0x13530000], // 14
  [0x0000d90f, 0x03530000], // 15
  [0x0000d903, 0x03537000], // 16: 64 KiB
  [0x0000d907, 0x03537000], // 17
  [0x0000d907, 0x07537000], // 18
  [0x0000d917, 0x07537000], // 19
  [0x0000d917, 0x47537000], // 20: 1 MiB
  [0x0000d917, 0x67537000], // 21
  [0x0000d937, 0x67537000], // 22
  [0x0000d937, 0x77537000], // 23
  [0x0000d937, 0x77577000], // 24
  [0x0000db37, 0x77577000], // 25
];

const NORMALIZATION_LEVEL = 2;

/** The chunk size bounds REAPI allows for avg_chunk_size_bytes. */
export const FAST_CDC_MIN_AVERAGE_BYTES = 1024;
export const FAST_CDC_MAX_AVERAGE_BYTES = 1024 * 1024;

export interface FastCdc2020Options {
  /** A power of two. REAPI allows 1 KiB to 1 MiB and recommends 512 KiB. */
  readonly avgChunkSizeBytes: number;
  /** XORed into every Gear entry; REAPI recommends 0. */
  readonly seed?: number;
  /** Override of avg/4, only for checking against published test vectors. */
  readonly minChunkSizeBytes?: number;
  /** Override of avg*4, only for checking against published test vectors. */
  readonly maxChunkSizeBytes?: number;
}

let baseGear: { hi: Uint32Array; lo: Uint32Array } | undefined;

function gearTable(): { hi: Uint32Array; lo: Uint32Array } {
  if (!baseGear) {
    const hi = new Uint32Array(256);
    const lo = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      const md5 = createHash('md5').update(Buffer.alloc(64, i)).digest();
      hi[i] = md5.readUInt32BE(0);
      lo[i] = md5.readUInt32BE(4);
    }
    baseGear = { hi, lo };
  }
  return baseGear;
}

export class FastCdc2020Chunker {
  readonly minSize: number;
  readonly avgSize: number;
  readonly maxSize: number;
  private readonly gearHi: Uint32Array;
  private readonly gearLo: Uint32Array;
  private readonly maskSmallHi: number;
  private readonly maskSmallLo: number;
  private readonly maskLargeHi: number;
  private readonly maskLargeLo: number;

  constructor(options: FastCdc2020Options) {
    const avg = options.avgChunkSizeBytes;
    if (!Number.isSafeInteger(avg) || avg <= 0 || (avg & (avg - 1)) !== 0) {
      throw new RangeError(`FastCDC average chunk size must be a power of two, got ${avg}`);
    }
    const bits = Math.round(Math.log2(avg));
    const small = MASKS[bits + NORMALIZATION_LEVEL];
    const large = MASKS[bits - NORMALIZATION_LEVEL];
    if (!small || !large || bits - NORMALIZATION_LEVEL < 5) {
      throw new RangeError(`FastCDC average chunk size ${avg} is outside the mask table`);
    }
    this.avgSize = avg;
    this.minSize = options.minChunkSizeBytes ?? avg / 4;
    this.maxSize = options.maxChunkSizeBytes ?? avg * 4;
    [this.maskSmallHi, this.maskSmallLo] = small;
    [this.maskLargeHi, this.maskLargeLo] = large;
    const seed = (options.seed ?? 0) >>> 0;
    const base = gearTable();
    this.gearHi = base.hi;
    this.gearLo = seed === 0 ? base.lo : base.lo.map((v) => (v ^ seed) >>> 0);
  }

  /** Length of the first chunk of `data` (which holds the rest of the blob, or at least maxSize bytes of it). */
  cut(data: Uint8Array): number {
    let remaining = data.length;
    if (remaining <= this.minSize) return remaining;
    let center = this.avgSize;
    if (remaining > this.maxSize) remaining = this.maxSize;
    else if (remaining < center) center = remaining;
    const gearHi = this.gearHi;
    const gearLo = this.gearLo;
    let hi = 0;
    let lo = 0;
    // The reference implementations step two bytes at a time from even offsets; per byte over the
    // same even-aligned range gives the same cuts.
    const start = this.minSize - (this.minSize % 2);
    const normalizeAt = center - (center % 2);
    const end = remaining - (remaining % 2);
    let maskHi = this.maskSmallHi;
    let maskLo = this.maskSmallLo;
    for (let j = start; j < end; j++) {
      if (j === normalizeAt) {
        maskHi = this.maskLargeHi;
        maskLo = this.maskLargeLo;
      }
      const b = data[j]!;
      // hash = (hash << 1) + gear[b], modulo 2^64
      hi = ((hi << 1) | (lo >>> 31)) >>> 0;
      const sumLo = ((lo << 1) >>> 0) + gearLo[b]!;
      lo = sumLo >>> 0;
      hi = (hi + gearHi[b]! + (sumLo > 0xffffffff ? 1 : 0)) >>> 0;
      if ((hi & maskHi) === 0 && (lo & maskLo) === 0) return j;
    }
    return remaining;
  }

  /** Splits a stream into chunks, holding at most maxSize plus one input piece in memory. */
  async *chunks(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
    let pending: Buffer = Buffer.alloc(0);
    for await (const piece of source) {
      pending = pending.length === 0 ? Buffer.from(piece) : Buffer.concat([pending, piece]);
      while (pending.length > this.maxSize) {
        const length = this.cut(pending);
        yield Buffer.from(pending.subarray(0, length));
        pending = pending.subarray(length);
      }
    }
    while (pending.length > 0) {
      const length = this.cut(pending);
      yield Buffer.from(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  }
}
