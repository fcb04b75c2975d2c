import { StarlarkError } from './starlark-error.js';
import { percentFormat } from './builtins/percent-format.js';
import { StarBytes } from './values/bytes.js';
import { repr, truth, typeName } from './values/describe.js';
import { StarDict } from './values/dict.js';
import { compare, equals } from './values/equality.js';
import { StarFloat } from './values/float.js';
import {
  intAdd,
  intAnd,
  intFloorDiv,
  intInvert,
  intMod,
  intMul,
  intNeg,
  intOr,
  intShiftLeft,
  intShiftRight,
  intSub,
  intToFloat,
  intXor,
  type Int,
} from './values/int.js';
import { checkSize, MAX_ELEMENTS } from './values/size-limit.js';
import { StarList, StarTuple } from './values/list.js';
import { StarRange } from './values/range.js';
import { StarSet } from './values/set.js';
import { None, StarObject, type Value } from './values/value.js';

function isNum(v: Value): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}

/** The float value of an int or float operand, or undefined for other types. */
function asFloat(v: Value): number | undefined {
  if (v instanceof StarFloat) return v.value;
  if (isNum(v)) return intToFloat(v);
  return undefined;
}

/** No built-in rule applies: ask the operands' `binary` capability, else fail like starlark-go. */
function unknown(op: string, x: Value, y: Value): Value {
  if (x instanceof StarObject) {
    const r = x.binary(op, y, 'left');
    if (r !== undefined) return r;
  }
  if (y instanceof StarObject) {
    const r = y.binary(op, x, 'right');
    if (r !== undefined) return r;
  }
  throw new StarlarkError(`unknown binary op: ${typeName(x)} ${op} ${typeName(y)}`);
}

/** Upper bound on the elements a repetition may produce, as starlark-go. */
const MAX_REPEAT = 1 << 30;

function repeatCount(n: Int, size: number, max = MAX_REPEAT): number {
  if (n <= 0) return 0;
  if (typeof n === 'bigint' || n > 0x7fffffff) throw new StarlarkError(`repeat count ${n} too large`);
  if (size * n >= max) throw new StarlarkError(`excessive repeat (${size} * ${n} elements)`);
  return n;
}

/** `seq * n` for strings, lists, tuples and bytes; undefined for other types. */
function repeat(seq: Value, n: Int): Value | undefined {
  if (typeof seq === 'string') return seq.repeat(repeatCount(n, seq.length));
  // Lists and tuples are bounded lower than strings: V8 aborts the process on a huge array.
  if (seq instanceof StarList) return new StarList(repeatArray(seq.elems, repeatCount(n, seq.elems.length, MAX_ELEMENTS + 1)));
  if (seq instanceof StarTuple) return new StarTuple(repeatArray(seq.elems, repeatCount(n, seq.elems.length, MAX_ELEMENTS + 1)));
  if (seq instanceof StarBytes) {
    const k = repeatCount(n, seq.data.length);
    const out = new Uint8Array(seq.data.length * k);
    for (let i = 0; i < k; i++) out.set(seq.data, i * seq.data.length);
    return new StarBytes(out);
  }
  return undefined;
}

function repeatArray(a: readonly Value[], n: number): Value[] {
  const out: Value[] = [];
  for (let i = 0; i < n; i++) for (const e of a) out.push(e);
  return out;
}

function floatResult(f: number): StarFloat {
  return new StarFloat(f);
}

/** The slow path of every arithmetic and bitwise operator (the evaluator inlines the int fast paths). */
export function binaryOp(op: string, x: Value, y: Value): Value {
  switch (op) {
    case '+':
      if (isNum(x) && isNum(y)) return intAdd(x, y);
      if (typeof x === 'string' && typeof y === 'string') return x + y;
      if (x instanceof StarFloat || y instanceof StarFloat) {
        const a = asFloat(x);
        const b = asFloat(y);
        if (a !== undefined && b !== undefined) return floatResult(a + b);
      }
      if (x instanceof StarList && y instanceof StarList) {
        checkSize('list', x.elems.length + y.elems.length);
        return new StarList(x.elems.concat(y.elems));
      }
      if (x instanceof StarTuple && y instanceof StarTuple) {
        checkSize('tuple', x.elems.length + y.elems.length);
        return new StarTuple(x.elems.concat(y.elems));
      }
      if (x instanceof StarBytes && y instanceof StarBytes) {
        const out = new Uint8Array(x.data.length + y.data.length);
        out.set(x.data);
        out.set(y.data, x.data.length);
        return new StarBytes(out);
      }
      return unknown(op, x, y);
    case '-':
      if (isNum(x) && isNum(y)) return intSub(x, y);
      if (x instanceof StarSet && y instanceof StarSet) return setDifference(x, y);
      return floatOp(op, x, y, (a, b) => a - b);
    case '*':
      if (isNum(x) && isNum(y)) return intMul(x, y);
      if (isNum(y) && !(x instanceof StarFloat)) {
        const r = repeat(x, y);
        if (r !== undefined) return r;
      }
      if (isNum(x) && !(y instanceof StarFloat)) {
        const r = repeat(y, x);
        if (r !== undefined) return r;
      }
      return floatOp(op, x, y, (a, b) => a * b);
    case '/':
      return floatOp(op, x, y, (a, b) => {
        if (b === 0) throw new StarlarkError('floating-point division by zero');
        return a / b;
      });
    case '//':
      if (isNum(x) && isNum(y)) return intFloorDiv(x, y);
      return floatOp(op, x, y, (a, b) => {
        if (b === 0) throw new StarlarkError('floored division by zero');
        return Math.floor(a / b);
      });
    case '%':
      if (isNum(x) && isNum(y)) return intMod(x, y);
      if (typeof x === 'string') return percentFormat(x, y);
      return floatOp(op, x, y, (a, b) => {
        if (b === 0) throw new StarlarkError('floating-point modulo by zero');
        let z = a % b;
        if (z !== 0 && z < 0 !== b < 0) z += b;
        return z;
      });
    case '&':
      if (isNum(x) && isNum(y)) return intAnd(x, y);
      if (x instanceof StarSet && y instanceof StarSet) return setIntersection(x, y);
      return unknown(op, x, y);
    case '|':
      if (isNum(x) && isNum(y)) return intOr(x, y);
      if (x instanceof StarSet && y instanceof StarSet) return setUnion(x, y);
      if (x instanceof StarDict && y instanceof StarDict) {
        const out = new StarDict();
        for (const [k, v] of dictEntries(x)) out.set(k, v);
        for (const [k, v] of dictEntries(y)) out.set(k, v);
        return out;
      }
      return unknown(op, x, y);
    case '^':
      if (isNum(x) && isNum(y)) return intXor(x, y);
      if (x instanceof StarSet && y instanceof StarSet) return setSymmetricDifference(x, y);
      return unknown(op, x, y);
    case '<<':
      if (isNum(x) && isNum(y)) return intShiftLeft(x, y);
      return unknown(op, x, y);
    case '>>':
      if (isNum(x) && isNum(y)) return intShiftRight(x, y);
      return unknown(op, x, y);
    case 'in':
      return contains(y, x);
    case 'not in':
      return !contains(y, x);
    case '==':
      return equals(x, y);
    case '!=':
      return !equals(x, y);
    case '<':
      return compare(x, y, op) < 0;
    case '<=':
      return compare(x, y, op) <= 0;
    case '>':
      return compare(x, y, op) > 0;
    case '>=':
      return compare(x, y, op) >= 0;
  }
  throw new StarlarkError(`unknown binary op: ${op}`);
}

function floatOp(op: string, x: Value, y: Value, f: (a: number, b: number) => number): Value {
  if ((x instanceof StarFloat || isNum(x)) && (y instanceof StarFloat || isNum(y))) {
    return floatResult(f(asFloat(x)!, asFloat(y)!));
  }
  return unknown(op, x, y);
}

export function dictEntries(d: StarDict): [Value, Value][] {
  const out: [Value, Value][] = [];
  for (const [n, v] of d.table.map) out.push([d.table.original(n), v]);
  return out;
}

export function setUnion(x: StarSet, y: StarSet): StarSet {
  const out = new StarSet();
  for (const e of x.elements()) out.add(e);
  for (const e of y.elements()) out.add(e);
  return out;
}

export function setIntersection(x: StarSet, y: StarSet): StarSet {
  const out = new StarSet();
  for (const e of x.elements()) if (y.has(e)) out.add(e);
  return out;
}

export function setDifference(x: StarSet, y: StarSet): StarSet {
  const out = new StarSet();
  for (const e of x.elements()) if (!y.has(e)) out.add(e);
  return out;
}

export function setSymmetricDifference(x: StarSet, y: StarSet): StarSet {
  const out = new StarSet();
  for (const e of x.elements()) if (!y.has(e)) out.add(e);
  for (const e of y.elements()) if (!x.has(e)) out.add(e);
  return out;
}

/** `x in container`. */
export function contains(container: Value, x: Value): boolean {
  if (typeof container === 'string') {
    if (typeof x !== 'string') throw new StarlarkError(`'in <string>' requires string as left operand, not ${typeName(x)}`);
    return container.includes(x);
  }
  if (container instanceof StarList || container instanceof StarTuple) {
    const elems = container.elems;
    if (typeof x !== 'object') {
      // A primitive equals only an identical primitive, or a float with the same value.
      for (let i = 0; i < elems.length; i++) {
        const e = elems[i]!;
        if (e === x || (e instanceof StarFloat && equals(e, x))) return true;
      }
      return false;
    }
    for (let i = 0; i < elems.length; i++) if (equals(elems[i]!, x)) return true;
    return false;
  }
  if (container instanceof StarDict) return container.table.has(x);
  if (container instanceof StarSet) return container.has(x);
  if (container instanceof StarRange) {
    if (typeof x === 'number') return container.contains(x);
    if (typeof x === 'bigint') return false;
    if (x instanceof StarFloat) return Number.isInteger(x.value) && container.contains(x.value);
    throw new StarlarkError(`'in <range>' requires integer as left operand, not ${typeName(x)}`);
  }
  if (container instanceof StarBytes) {
    if (x instanceof StarBytes) return bytesIncludes(container.data, x.data);
    if (typeof x === 'number') {
      if (x < 0 || x > 255) throw new StarlarkError(`int in bytes: ${x} out of range`);
      return container.data.includes(x);
    }
    throw new StarlarkError(`'in bytes' requires bytes or int as left operand, not ${typeName(x)}`);
  }
  if (container instanceof StarObject) {
    const elems = container.iterate();
    if (elems && container.type.endsWith('.elems')) {
      for (const e of elems) if (equals(e, x)) return true;
      return false;
    }
  }
  return truth(unknown('in', x, container));
}

function bytesIncludes(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

export function unaryOp(op: string, x: Value): Value {
  switch (op) {
    case 'not':
      return !truth(x);
    case '-':
      if (isNum(x)) return intNeg(x);
      if (x instanceof StarFloat) return new StarFloat(-x.value);
      break;
    case '+':
      if (isNum(x) || x instanceof StarFloat) return x;
      break;
    case '~':
      if (isNum(x)) return intInvert(x);
      break;
  }
  throw new StarlarkError(`unknown unary op: ${op} ${typeName(x)}`);
}

// ---------------------------------------------------------------------------------------------
// Indexing and slicing
// ---------------------------------------------------------------------------------------------

function outOfRange(i: number | bigint, n: number, x: Value): never {
  if (n === 0) throw new StarlarkError(`index ${i} out of range: empty ${typeName(x)}`);
  throw new StarlarkError(`${typeName(x)} index ${i} out of range [${-n}:${n - 1}]`);
}

/** `x[i]` for every indexable or mapping type. */
export function getIndex(x: Value, i: Value): Value {
  if (x instanceof StarDict) {
    const v = x.table.get(i);
    if (v === undefined) throw new StarlarkError(`key ${repr(i)} not in dict`);
    return v;
  }
  let n: number;
  if (typeof x === 'string') n = x.length;
  else if (x instanceof StarList || x instanceof StarTuple) n = x.elems.length;
  else if (x instanceof StarBytes || x instanceof StarRange) n = x.len();
  else if (x instanceof StarObject && 'getIndex' in x) return (x as unknown as { getIndex(i: Value): Value }).getIndex(i);
  else throw new StarlarkError(`unhandled index operation ${typeName(x)}[${typeName(i)}]`);
  if (typeof i !== 'number') {
    if (typeof i === 'bigint') outOfRange(i, n, x);
    throw new StarlarkError(`${typeName(x)} index: got ${typeName(i)}, want int`);
  }
  let k = i;
  if (k < 0) k += n;
  if (k < 0 || k >= n) outOfRange(i, n, x);
  if (typeof x === 'string') return x[k]!;
  if (x instanceof StarList || x instanceof StarTuple) return x.elems[k]!;
  return (x as StarBytes | StarRange).index(k);
}

/** `x[i] = v`. */
export function setIndex(x: Value, i: Value, v: Value): void {
  if (x instanceof StarDict) {
    x.set(i, v);
    return;
  }
  if (x instanceof StarList) {
    x.checkMutable('assign to element of');
    const n = x.elems.length;
    if (typeof i !== 'number') {
      if (typeof i === 'bigint') outOfRange(i, n, x);
      throw new StarlarkError(`list index: got ${typeName(i)}, want int`);
    }
    let k = i;
    if (k < 0) k += n;
    if (k < 0 || k >= n) outOfRange(i, n, x);
    x.elems[k] = v;
    return;
  }
  throw new StarlarkError(`${typeName(x)} value does not support item assignment`);
}

function sliceIndex(v: Value, n: number, what: string): number | undefined {
  if (v === None) return undefined;
  if (typeof v === 'number') return v < 0 ? v + n : v;
  if (typeof v === 'bigint') return v < 0n ? -1 - n : n + 1;
  throw new StarlarkError(`invalid ${what} index: got ${typeName(v)}, want int`);
}

/** `x[lo:hi:step]` with starlark-go's clamping rules; absent parts are None. */
export function slice(x: Value, lo: Value, hi: Value, stepv: Value): Value {
  let n: number;
  if (typeof x === 'string') n = x.length;
  else if (x instanceof StarList || x instanceof StarTuple || x instanceof StarBytes || x instanceof StarRange) n = x.len();
  else throw new StarlarkError(`invalid slice operand ${typeName(x)}`);
  let step = 1;
  if (stepv !== None) {
    if (typeof stepv !== 'number') {
      if (typeof stepv === 'bigint') step = stepv < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
      else throw new StarlarkError(`invalid slice step: got ${typeName(stepv)}, want int`);
    } else step = stepv;
    if (step === 0) throw new StarlarkError('zero is not a valid slice step');
  }
  let start: number;
  let end: number;
  if (step > 0) {
    start = sliceIndex(lo, n, 'start') ?? 0;
    start = start < 0 ? 0 : Math.min(start, n);
    end = sliceIndex(hi, n, 'end') ?? n;
    end = end < 0 ? 0 : Math.min(end, n);
    if (end < start) end = start;
  } else {
    start = sliceIndex(lo, n, 'start') ?? n - 1;
    if (start >= n) start = n - 1;
    end = sliceIndex(hi, n, 'end') ?? -1;
    if (end < -1) end = -1;
    if (start < end) start = end;
  }
  if (typeof x === 'string') {
    if (step === 1) return x.slice(start, end);
    let out = '';
    if (step > 0) for (let i = start; i < end; i += step) out += x[i];
    else for (let i = start; i > end; i += step) out += x[i];
    return out;
  }
  return (x as StarList).slice(start, end, step);
}
