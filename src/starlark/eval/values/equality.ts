import { StarlarkError } from '../starlark-error.js';
import { typeName } from './describe.js';
import { StarFloat } from './float.js';
import { intCompare } from './int.js';
import type { StarObject, Value } from './value.js';

/** Deeply nested containers stop comparing here instead of overflowing the JS stack. */
const MAX_DEPTH = 1000;

function depthCheck(depth: number): void {
  if (depth > MAX_DEPTH) throw new StarlarkError('comparison exceeded maximum recursion depth');
}

/** Starlark `==`. Ints and floats compare by numeric value; everything else needs the same type. */
export function equals(a: Value, b: Value, depth = 0): boolean {
  if (a === b) return true; // NaN included: Starlark totally orders floats, NaN == NaN
  const ta = typeof a;
  if (ta === 'string' || ta === 'boolean') return false;
  if (ta === 'number' || ta === 'bigint') {
    if (b instanceof StarFloat) return compareIntFloat(a as number | bigint, b.value) === 0;
    return false; // normalised ints: different representation means different value
  }
  if (a instanceof StarFloat) {
    if (b instanceof StarFloat) return compareFloats(a.value, b.value) === 0;
    if (typeof b === 'number' || typeof b === 'bigint') return compareIntFloat(b, a.value) === 0;
    return false;
  }
  if (typeof b !== 'object') return false;
  const oa = a as StarObject;
  if (oa.constructor !== b.constructor) return false;
  depthCheck(depth);
  return oa.equals(b, depth + 1);
}

/** Three-way comparison of an int with a float, exact for big ints; NaN compares greater than all. */
function compareIntFloat(i: number | bigint, f: number): number {
  if (Number.isNaN(f)) return -1;
  if (typeof i === 'number') return i < f ? -1 : i > f ? 1 : 0;
  if (!Number.isFinite(f)) return f > 0 ? -1 : 1;
  const fl = Math.floor(f);
  const bf = BigInt(fl);
  if (i < bf) return -1;
  if (i > bf) return 1;
  return fl === f ? 0 : -1;
}

function compareFloats(x: number, y: number): number {
  // Total order with NaN greater than +Inf, as starlark-go.
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : 1;
  if (Number.isNaN(y)) return -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Three-way comparison for `<`, `<=`, `>`, `>=` and sorting. Throws starlark-go's
 * `T < U not implemented` for unordered types; `op` only names the operator in that message.
 */
export function compare(a: Value, b: Value, op = '<', depth = 0): number {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'number' && tb === 'number') return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (ta === 'string' && tb === 'string') return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  const aNum = ta === 'number' || ta === 'bigint';
  const bNum = tb === 'number' || tb === 'bigint';
  if (aNum && bNum) return intCompare(a as number | bigint, b as number | bigint);
  if (aNum && b instanceof StarFloat) return compareIntFloat(a as number | bigint, b.value);
  if (bNum && a instanceof StarFloat) return -compareIntFloat(b as number | bigint, a.value);
  if (a instanceof StarFloat && b instanceof StarFloat) return compareFloats(a.value, b.value);
  if (ta === 'boolean' && tb === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (ta === 'object' && tb === 'object' && (a as StarObject).constructor === (b as StarObject).constructor) {
    depthCheck(depth);
    const c = (a as StarObject).compare(b as StarObject, depth + 1);
    if (c !== undefined) return c;
  }
  throw new StarlarkError(`${typeName(a)} ${op} ${typeName(b)} not implemented`);
}
