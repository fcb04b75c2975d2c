import { StarlarkError } from '../starlark-error.js';
import { intHash, normalizeBig, type Int } from './int.js';
import { StarObject } from './value.js';

/** A Starlark float: boxed so that it stays distinguishable from an int with the same value. */
export class StarFloat extends StarObject {
  constructor(readonly value: number) {
    super();
  }
  get type(): string {
    return 'float';
  }
  override truth(): boolean {
    return this.value !== 0;
  }
  override hash(): number {
    const f = this.value;
    if (Number.isInteger(f)) return intHash(floatToInt(f));
    if (Number.isNaN(f)) return 0x7ff80000;
    if (!Number.isFinite(f)) return f > 0 ? 0x7ff00000 : -0x100000;
    // Non-integral floats equal no int, so any deterministic mix of the bits will do.
    FLOAT_VIEW[0] = f;
    return (INT_VIEW[0]! ^ INT_VIEW[1]!) | 0;
  }
  repr(): string {
    return formatFloat(this.value, 'g');
  }
}

const FLOAT_VIEW = new Float64Array(1);
const INT_VIEW = new Int32Array(FLOAT_VIEW.buffer);

export function float(f: number): StarFloat {
  return new StarFloat(f);
}

/** Truncates a finite float toward zero and returns it as an int. */
export function floatToInt(f: number): Int {
  if (Number.isNaN(f)) throw new StarlarkError('cannot convert float NaN to integer');
  if (!Number.isFinite(f)) throw new StarlarkError('cannot convert float infinity to integer');
  const t = Math.trunc(f);
  if (Number.isSafeInteger(t)) return t === 0 ? 0 : t;
  return normalizeBig(BigInt(t));
}

/** Splits |f| into its shortest round-trip decimal digits and decimal exponent (d.ddd × 10^exp). */
function shortestDigits(f: number): { digits: string; exp: number } {
  const s = Math.abs(f).toExponential(); // e.g. "1.2345e+3": the shortest digits that round-trip
  const e = s.indexOf('e');
  return { digits: s.slice(0, e).replace('.', ''), exp: Number(s.slice(e + 1)) };
}

function expSuffix(exp: number, conv: string): string {
  const sign = exp < 0 ? '-' : '+';
  const a = Math.abs(exp);
  return `${conv}${sign}${a < 10 ? '0' : ''}${a}`;
}

/**
 * Formats a float like starlark-go: `g` is the shortest form that round-trips, in exponent form
 * when the exponent is < -4 or >= 6 (Go's %g), and always shows it is a float (`1.0`, `1e+100`);
 * `e`, `f` use six digits after the point. Infinities print as `+inf`/`-inf`.
 */
export function formatFloat(f: number, conv: 'g' | 'G' | 'e' | 'E' | 'f' | 'F'): string {
  if (Number.isNaN(f)) return 'nan';
  if (!Number.isFinite(f)) return f > 0 ? '+inf' : '-inf';
  const neg = f < 0 || Object.is(f, -0) ? '-' : '';
  const lower = conv.toLowerCase();
  const expChar = conv === 'E' || conv === 'G' ? 'E' : 'e';
  if (lower === 'e') {
    const s = Math.abs(f).toExponential(6);
    const e = s.indexOf('e');
    return neg + s.slice(0, e) + expSuffix(Number(s.slice(e + 1)), expChar);
  }
  if (lower === 'f') {
    const a = Math.abs(f);
    if (a < 1e21) return neg + a.toFixed(6);
    return `${neg}${BigInt(a).toString()}.000000`;
  }
  if (f === 0) return `${neg}0.0`;
  const { digits, exp } = shortestDigits(f);
  if (exp < -4 || exp >= 6) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return neg + mant + expSuffix(exp, expChar);
  }
  let body: string;
  if (exp < 0) body = `0.${'0'.repeat(-exp - 1)}${digits}`;
  else if (digits.length > exp + 1) body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  else body = `${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return neg + body;
}
