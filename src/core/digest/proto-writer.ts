import { putVarint } from '../byte-codec.js';

/**
 * A minimal protobuf writer for the hand-written encoders of `reapi-encoders.ts`: fields are
 * written in the order the caller writes them, nested messages get their length when they end.
 * One writer is reused for every message (its buffer grows and stays), and `finish` copies the
 * bytes out: the generated codecs allocate an object per field and a buffer per string, which made
 * encoding the largest part of computing an action key.
 */
export class ProtoWriter {
  private buf = Buffer.allocUnsafe(4096);
  private len = 0;
  /** Where each open nested message's one reserved length byte is. */
  private readonly open: number[] = [];

  /** A string field; the empty string is written too (callers skip defaults themselves). */
  string(field: number, value: string): void {
    const bytes = Buffer.byteLength(value, 'utf8');
    this.ensure(10 + bytes);
    this.key(field, 2);
    this.varint(bytes);
    this.len += this.buf.write(value, this.len, 'utf8');
  }

  /** A length-delimited field of raw bytes. */
  bytes(field: number, value: Uint8Array): void {
    this.ensure(10 + value.length);
    this.key(field, 2);
    this.varint(value.length);
    this.buf.set(value, this.len);
    this.len += value.length;
  }

  /** A varint field (int32/int64 values from 0 to 2^53, enums, bools as 0/1). */
  uint(field: number, value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`field ${field}: ${value} is not an integer from 0 to 2^53`);
    this.ensure(20);
    this.key(field, 0);
    this.varint(value);
  }

  /** Starts a nested message field; `end` closes it. */
  begin(field: number): void {
    this.ensure(11);
    this.key(field, 2);
    this.open.push(this.len);
    this.len++; // one byte for the length, moved aside when it needs more
  }

  end(): void {
    const at = this.open.pop()!;
    const size = this.len - at - 1;
    if (size < 0x80) {
      this.buf[at] = size;
      return;
    }
    const extra = varintBytes(size) - 1;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.len);
    this.len += extra;
    const end = this.len;
    this.len = at;
    this.varint(size);
    this.len = end;
  }

  /** Drops what was written (after a failed encode). */
  reset(): void {
    this.len = 0;
    this.open.length = 0;
  }

  /** The message written so far, copied out; the writer starts over. */
  finish(): Buffer {
    if (this.open.length > 0) throw new Error('ProtoWriter.finish: a nested message is still open');
    const out = Buffer.allocUnsafe(this.len);
    this.buf.copy(out, 0, 0, this.len);
    this.len = 0;
    return out;
  }

  private key(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  private varint(value: number): void {
    this.len = putVarint(this.buf, this.len, value);
  }

  private ensure(more: number): void {
    if (this.len + more <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + more));
    this.buf.copy(grown, 0, 0, this.len);
    this.buf = grown;
  }
}

function varintBytes(value: number): number {
  let n = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) n++;
  return n;
}
