import { StarlarkError } from '../starlark-error.js';

/**
 * Starlark ints have arbitrary precision. A value inside the safe integer range is a JS number;
 * outside it is a bigint. Every operation returns the normalised form, so `typeof x === 'number'`
 * is the fast path and two equal ints always have the same representation.
 */
export type Int = number | bigint;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

export function normalizeBig(b: bigint): Int {
  return b >= MIN_SAFE && b <= MAX_SAFE ? Number(b) : b;
}

export function intAdd(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a + b;
    if (Number.isSafeInteger(s)) return s;
  }
  return normalizeBig(BigInt(a) + BigInt(b));
}

export function intSub(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a - b;
    if (Number.isSafeInteger(s)) return s;
  }
  return normalizeBig(BigInt(a) - BigInt(b));
}

export function intMul(a: Int, b: Int): Int {
  if (typeof a === 'number' && typeof b === 'number') {
    const p = a * b;
    if (Number.isSafeInteger(p)) return p === 0 ? 0 : p; // no -0
  }
  return normalizeBig(BigInt(a) * BigInt(b));
}

export function intNeg(a: Int): Int {
  if (typeof a === 'number') return a === 0 ? 0 : -a;
  return normalizeBig(-a);
}

/** Floored division (rounds toward negative infinity), as in Python. */
export function intFloorDiv(a: Int, b: Int): Int {
  if (b === 0) throw new StarlarkError('floored division by zero');
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a % b;
    let q = (a - r) / b;
    if (r !== 0 && r < 0 !== b < 0) q -= 1;
    if (!Number.isSafeInteger(q)) return normalizeBig(BigInt(a) / BigInt(b)); // only MIN_SAFE / -1 style edges
    return q === 0 ? 0 : q;
  }
  const x = BigInt(a);
  const y = BigInt(b);
  let q = x / y;
  if (x % y !== 0n && x < 0n !== y < 0n) q -= 1n;
  return normalizeBig(q);
}

/** Floored modulo: the result has the sign of the divisor. */
export function intMod(a: Int, b: Int): Int {
  if (b === 0) throw new StarlarkError('integer modulo by zero');
  if (typeof a === 'number' && typeof b === 'number') {
    let r = a % b;
    if (r !== 0 && r < 0 !== b < 0) r += b;
    return r === 0 ? 0 : r;
  }
  const y = BigInt(b);
  let r = BigInt(a) % y;
  if (r !== 0n && r < 0n !== y < 0n) r += y;
  return normalizeBig(r);
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function isInt32(a: Int): a is number {
  return typeof a === 'number' && a >= INT32_MIN && a <= INT32_MAX;
}

export function intAnd(a: Int, b: Int): Int {
  if (isInt32(a) && isInt32(b)) return a & b;
  return normalizeBig(BigInt(a) & BigInt(b));
}

export function intOr(a: Int, b: Int): Int {
  if (isInt32(a) && isInt32(b)) return a | b;
  return normalizeBig(BigInt(a) | BigInt(b));
}

export function intXor(a: Int, b: Int): Int {
  if (isInt32(a) && isInt32(b)) return a ^ b;
  return normalizeBig(BigInt(a) ^ BigInt(b));
}

export function intInvert(a: Int): Int {
  if (typeof a === 'number') return -a - 1;
  return normalizeBig(-a - 1n);
}

export function intShiftLeft(a: Int, n: Int): Int {
  if (n < 0) throw new StarlarkError(`negative shift count: ${n}`);
  if (n >= 512) throw new StarlarkError(`shift count too large: ${n}`); // as starlark-go
  const k = Number(n);
  if (typeof a === 'number' && k < 53) {
    const r = a * 2 ** k;
    if (Number.isSafeInteger(r)) return r;
  }
  return normalizeBig(BigInt(a) << BigInt(k));
}

export function intShiftRight(a: Int, n: Int): Int {
  if (n < 0) throw new StarlarkError(`negative shift count: ${n}`);
  if (typeof a === 'number') {
    if (n >= 64) return a < 0 ? -1 : 0;
    const r = Math.floor(a / 2 ** Number(n));
    return r === 0 ? 0 : r;
  }
  if (n >= 1 << 30) return a < 0n ? -1 : 0;
  return normalizeBig(a >> BigInt(n));
}

export function intCompare(a: Int, b: Int): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Converts an int to a float, failing like starlark-go when it is out of the float range. */
export function intToFloat(a: Int): number {
  if (typeof a === 'number') return a;
  const f = Number(a);
  if (!Number.isFinite(f)) throw new StarlarkError('int too large to convert to float');
  return f;
}

/** Hash of an int, equal to the hash of the equal float. */
export function intHash(a: Int): number {
  if (typeof a === 'number') {
    if (a >= INT32_MIN && a <= INT32_MAX) return a;
    return intHash(BigInt(a));
  }
  const lo = Number(BigInt.asIntN(32, a));
  const hi = Number(BigInt.asIntN(32, a >> 32n));
  return (lo ^ hi) | 0;
}

/** Parses an int literal body (no sign) in the given base; digits may be in any case. */
export function parseIntDigits(digits: string, base: number): Int | undefined {
  if (digits.length === 0) return undefined;
  const valid = /^[0-9a-z]+$/i;
  if (!valid.test(digits)) return undefined;
  for (const ch of digits) {
    const d = parseInt(ch, 36);
    if (Number.isNaN(d) || d >= base) return undefined;
  }
  if (base === 10 && digits.length < 16) return Number(digits);
  const prefix = base === 16 ? '0x' : base === 8 ? '0o' : base === 2 ? '0b' : '';
  if (prefix) return normalizeBig(BigInt(prefix + digits));
  let acc = 0n;
  const b = BigInt(base);
  for (const ch of digits) acc = acc * b + BigInt(parseInt(ch, 36));
  return normalizeBig(acc);
}
