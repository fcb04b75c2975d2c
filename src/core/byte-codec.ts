/**
 * The binary caches' one writer and reader: unsigned varints (LEB128, up to 2^53), float64s, strings
 * (their UTF-8 length and whether they are ASCII in one varint) and raw bytes. A reader never reads
 * past its end: truncated or garbled input is a ByteFormatError, which a cache treats as a miss.
 */

/** Input that is not what the writer wrote (truncated, garbled, another format). */
export class ByteFormatError extends Error {}

/** Buffer's own slice decoders: undocumented but what `toString` dispatches to, and about 3x faster on short strings. */
interface SlicingBuffer extends Buffer {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/**
 * Writes `n` (a non-negative safe integer, unchecked) at `pos` as an unsigned LEB128 varint, the
 * encoding of protobuf too; `buf` must have 8 bytes free there. Returns the position after it.
 */
export function putVarint(buf: Buffer, pos: number, n: number): number {
  if (n < 0x80000000) {
    let v = n >>> 0;
    while (v >= 0x80) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    return pos;
  }
  while (n >= 0x80) {
    buf[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  buf[pos++] = n;
  return pos;
}

export class ByteWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  get length(): number {
    return this.pos;
  }

  /** A non-negative safe integer. */
  uint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`ByteWriter.uint: ${n} is not a non-negative safe integer`);
    if (this.pos + 8 > this.buf.length) this.reserve(8);
    this.pos = putVarint(this.buf, this.pos, n);
  }

  float64(n: number): void {
    this.reserve(8);
    this.buf.writeDoubleLE(n, this.pos);
    this.pos += 8;
  }

  string(s: string): void {
    const n = s.length;
    // Written as ASCII (the common case) byte by byte; on the first other character, again as UTF-8.
    const start = this.pos;
    this.uint(n * 2);
    this.reserve(n);
    const buf = this.buf;
    let pos = this.pos;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[pos++] = c;
    }
    if (i === n) {
      this.pos = pos;
      return;
    }
    this.pos = start;
    const bytes = Buffer.byteLength(s, 'utf8');
    this.uint(bytes * 2 + 1);
    this.reserve(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Raw bytes, without their length. */
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** What was written (a view: the writer must not be used afterwards). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

export class ByteReader {
  private readonly buf: SlicingBuffer;
  pos: number;
  readonly end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as SlicingBuffer;
    if (start < 0 || end > this.buf.length || start > end) throw new ByteFormatError('byte range out of bounds');
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  uint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) throw new ByteFormatError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    throw new ByteFormatError('varint too long');
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  string(): string {
    const head = this.uint();
    const n = Math.floor(head / 2);
    this.need(n);
    const start = this.pos;
    this.pos += n;
    return head % 2 === 0 ? this.buf.latin1Slice(start, this.pos) : this.buf.utf8Slice(start, this.pos);
  }

  /** Skips one string without decoding it. */
  skipString(): void {
    this.skip(Math.floor(this.uint() / 2));
  }

  /** The next `n` bytes (a view of the input). */
  bytes(n: number): Buffer {
    this.need(n);
    const view = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return view;
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  private need(n: number): void {
    if (n > this.end - this.pos) throw new ByteFormatError('truncated data');
  }
}
