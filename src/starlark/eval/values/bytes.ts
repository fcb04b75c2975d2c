import { StarlarkError } from '../starlark-error.js';
import { StarObject, type Sequence, type Value } from './value.js';

const encoder = new TextEncoder();

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
  repr(): string {
    let out = 'b"';
    for (const c of this.data) {
      switch (c) {
        case 0x07: out += '\\a'; break;
        case 0x08: out += '\\b'; break;
        case 0x0c: out += '\\f'; break;
        case 0x0a: out += '\\n'; break;
        case 0x0d: out += '\\r'; break;
        case 0x09: out += '\\t'; break;
        case 0x0b: out += '\\v'; break;
        case 0x22: out += '\\"'; break;
        case 0x5c: out += '\\\\'; break;
        default:
          out += c < 0x20 || c >= 0x7f ? `\\x${c.toString(16).padStart(2, '0')}` : String.fromCharCode(c);
      }
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

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}

