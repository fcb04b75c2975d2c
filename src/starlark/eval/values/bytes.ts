import { StarObject, type Sequence, type Value } from './value.js';

const encoder = new TextEncoder();
const UTF8 = new TextDecoder('utf-8', { fatal: false });
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

/** Length of the valid UTF-8 sequence starting at i (a non-ASCII lead byte), or 0 if invalid. */
function utf8SequenceLength(d: Uint8Array, i: number): number {
  const c = d[i]!;
  const n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
  if (n === 0 || i + n > d.length) return 0;
  for (let k = 1; k < n; k++) if ((d[i + k]! & 0xc0) !== 0x80) return 0;
  const b1 = d[i + 1]!;
  if (c === 0xe0 && b1 < 0xa0) return 0; // overlong
  if (c === 0xed && b1 >= 0xa0) return 0; // surrogate
  if (c === 0xf0 && b1 < 0x90) return 0; // overlong
  if (c === 0xf4 && b1 >= 0x90) return 0; // beyond U+10FFFF
  return n;
}

/** An immutable byte string. */
export class StarBytes extends StarObject implements Sequence {
  constructor(readonly data: Uint8Array) {
    super();
  }
  static fromString(s: string): StarBytes {
    return new StarBytes(encoder.encode(s));
  }
  get type(): string {
    return 'bytes';
  }
  override truth(): boolean {
    return this.data.length > 0;
  }
  override hash(): number {
    let h = 0;
    for (const b of this.data) h = (Math.imul(h, 31) + b) | 0;
    return h;
  }
  override len(): number {
    return this.data.length;
  }
  index(i: number): Value {
    return this.data[i]!;
  }
  slice(start: number, end: number, step: number): Value {
    if (step === 1) return new StarBytes(this.data.slice(start, Math.max(start, end)));
    const out: number[] = [];
    for (let i = start; step > 0 ? i < end : i > end; i += step) out.push(this.data[i]!);
    return new StarBytes(Uint8Array.from(out));
  }
  override equals(other: StarObject): boolean {
    return other instanceof StarBytes && compareBytes(this.data, other.data) === 0;
  }
  override compare(other: StarObject): number | undefined {
    return compareBytes(this.data, (other as StarBytes).data);
  }
  /** Like starlark-go: valid printable UTF-8 shows as text, everything else as escapes. */
  repr(): string {
    const d = this.data;
    let out = 'b"';
    for (let i = 0; i < d.length; ) {
      const c = d[i]!;
      if (c >= 0x80) {
        const n = utf8SequenceLength(d, i);
        if (n > 0) {
          const ch = UTF8.decode(d.subarray(i, i + n));
          if (!NON_PRINTABLE.test(ch)) {
            out += ch;
            i += n;
            continue;
          }
        }
        out += `\\x${c.toString(16).padStart(2, '0')}`;
        i++;
        continue;
      }
      switch (c) {
        case 0x07:
          out += '\\a';
          break;
        case 0x08:
          out += '\\b';
          break;
        case 0x0c:
          out += '\\f';
          break;
        case 0x0a:
          out += '\\n';
          break;
        case 0x0d:
          out += '\\r';
          break;
        case 0x09:
          out += '\\t';
          break;
        case 0x0b:
          out += '\\v';
          break;
        case 0x22:
          out += '\\"';
          break;
        case 0x5c:
          out += '\\\\';
          break;
        default:
          out += c < 0x20 || c === 0x7f ? `\\x${c.toString(16).padStart(2, '0')}` : String.fromCharCode(c);
      }
      i++;
    }
    return `${out}"`;
  }
  /** str(bytes) decodes as UTF-8, replacing invalid sequences with U+FFFD (starlark-go). */
  override str(): string {
    return new TextDecoder('utf-8').decode(this.data);
  }
  override iterate(): Iterable<Value> | undefined {
    return undefined; // bytes are not iterable; use .elems()
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}
