import { positionalArgs, unpackArgs, wantBool, wantSmallInt } from '../args.js';
import { attrNames, findAttr } from '../attributes.js';
import { elementsOf, iterableArg } from '../iteration.js';
import { StarlarkError } from '../starlark-error.js';
import type { Thread } from '../thread.js';
import { StarBytes } from '../values/bytes.js';
import { Builtin, StarCallable, type BuiltinImpl, type Kwargs } from '../values/callable.js';
import { hashValue, repr, str, truth, typeName } from '../values/describe.js';
import { StarDict } from '../values/dict.js';
import { compare } from '../values/equality.js';
import { floatToInt, StarFloat } from '../values/float.js';
import { intNeg, parseIntDigits, type Int } from '../values/int.js';
import { EMPTY_TUPLE, StarList, StarTuple } from '../values/list.js';
import { StarRange } from '../values/range.js';
import { StarSet } from '../values/set.js';
import { None, type Value } from '../values/value.js';
import { updateDict } from './dict-methods.js';
import { sortByKeys, sortByValue, sortInts, sortStrings } from './sort.js';

function noKwargs(fn: string, kwargs: Kwargs | null): void {
  if (kwargs && kwargs.length > 0) throw new StarlarkError(`${fn} does not accept keyword arguments`);
}

/** int(x, base) for a string x, following starlark-go's parseInt (sign, optional prefix, base 0 = auto). */
function parseIntString(input: string, base: number): Int | undefined {
  let s = input;
  let neg = false;
  if (s[0] === '+') s = s.slice(1);
  else if (s[0] === '-') {
    neg = true;
    s = s.slice(1);
  }
  if (s.length > 1 && s[0] === '0') {
    const p = s.length > 2 ? { o: 8, O: 8, x: 16, X: 16, b: 2, B: 2 }[s[1]!] : undefined;
    if (p !== undefined) {
      if (base === 0 || base === p) {
        base = p;
        s = s.slice(2);
      }
    } else if (base === 0) {
      return /^0+$/.test(s) ? 0 : undefined;
    }
  }
  if (base === 0) base = 10;
  const v = parseIntDigits(s, base);
  if (v === undefined) return undefined;
  return neg ? intNeg(v) : v;
}

function intBuiltin(_t: Thread, args: Value[], kwargs: Kwargs | null): Value {
  const a = unpackArgs('int', args, kwargs, ['x', 'base?']);
  const x = a[0]!;
  const basev = a[1];
  if (typeof x === 'string') {
    let base = 10;
    if (basev !== undefined) {
      if (typeof basev !== 'number') throw new StarlarkError(`int: for base, got ${typeName(basev)}, want int`);
      if (basev !== 0 && (basev < 2 || basev > 36)) throw new StarlarkError('int: base must be an integer >= 2 && <= 36');
      base = basev;
    }
    const v = parseIntString(x, base);
    if (v === undefined) throw new StarlarkError(`int: invalid literal with base ${base}: ${x}`);
    return v;
  }
  if (basev !== undefined) throw new StarlarkError("int: can't convert non-string with explicit base");
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'number' || typeof x === 'bigint') return x;
  if (x instanceof StarFloat) {
    try {
      return floatToInt(x.value);
    } catch (e) {
      throw new StarlarkError(`int: ${(e as Error).message}`, { cause: e });
    }
  }
  throw new StarlarkError(`int: cannot convert ${typeName(x)} to int`);
}

const FLOAT_LITERAL = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

function floatBuiltin(_t: Thread, args: Value[], kwargs: Kwargs | null): Value {
  noKwargs('float', kwargs);
  if (args.length > 1) throw new StarlarkError(`float: got ${args.length} arguments, want at most 1`);
  if (args.length === 0) return new StarFloat(0);
  const x = args[0]!;
  if (x instanceof StarFloat) return x;
  if (typeof x === 'boolean') return new StarFloat(x ? 1 : 0);
  if (typeof x === 'number') return new StarFloat(x);
  if (typeof x === 'bigint') {
    const f = Number(x);
    if (!Number.isFinite(f)) throw new StarlarkError('int too large to convert to float');
    return new StarFloat(f);
  }
  if (typeof x === 'string') {
    if (x === '') throw new StarlarkError('float: empty string');
    if (!FLOAT_LITERAL.test(x)) throw new StarlarkError(`invalid float literal: ${x}`);
    const lower = x.toLowerCase().replace(/^\+/, '');
    if (lower.endsWith('nan')) return new StarFloat(NaN);
    if (lower.endsWith('inf') || lower.endsWith('infinity')) return new StarFloat(lower.startsWith('-') ? -Infinity : Infinity);
    const f = Number(x);
    if (!Number.isFinite(f)) throw new StarlarkError('floating-point number too large');
    return new StarFloat(f);
  }
  throw new StarlarkError(`float got ${typeName(x)}, want number or string`);
}

function minMax(name: 'min' | 'max', thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
  const a = unpackArgs(name, [], kwargs, ['key?', 'default?']);
  const key = a[0] === None ? undefined : a[0];
  if (args.length === 0) throw new StarlarkError(`${name} requires at least one positional argument`);
  let elems: readonly Value[];
  if (args.length === 1) {
    const e = elementsOf(args[0]!);
    if (e === undefined) throw new StarlarkError(`${name}: ${typeName(args[0]!)} value is not iterable`);
    elems = e;
  } else {
    if (a[1] !== undefined) throw new StarlarkError(`${name}: cannot set default when more than one positional argument is given`);
    elems = args;
  }
  if (elems.length === 0) {
    if (a[1] !== undefined) return a[1];
    throw new StarlarkError(`${name}: argument is an empty sequence`);
  }
  let best = elems[0]!;
  let bestKey = key ? thread.call(key, [best]) : best;
  for (let i = 1; i < elems.length; i++) {
    const e = elems[i]!;
    const k = key ? thread.call(key, [e]) : e;
    const c = compare(k, bestKey);
    if (name === 'min' ? c < 0 : c > 0) {
      best = e;
      bestKey = k;
    }
  }
  return best;
}

/** Range bounds are safe integers (|x| < 2^53), so ranges stay lazy and exact. */
function rangeArg(v: Value, i: number): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') throw new StarlarkError(`range: for parameter ${i}: ${v} out of range (want value in signed 53-bit range)`);
  throw new StarlarkError(`range: for parameter ${i}: got ${typeName(v)}, want int`);
}

function sortedBuiltin(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
  // key and reverse are keyword-only, as in starlark-go.
  positionalArgs('sorted', args, null, 1, 1);
  const a = unpackArgs('sorted', args, kwargs, ['iterable', 'key?', 'reverse?']);
  const elems = elementsOf(a[0]!);
  if (elems === undefined) throw new StarlarkError(`sorted: for parameter iterable: got ${typeName(a[0]!)}, want iterable`);
  const keyFn = a[1];
  if (keyFn !== undefined && !(keyFn instanceof StarCallable)) throw new StarlarkError(`sorted: for parameter key: got ${typeName(keyFn)}, want callable`);
  const reverse = a[2] !== undefined && wantBool('sorted', 'reverse', a[2]);
  const out = sortValues(thread, elems, keyFn, reverse);
  return new StarList(out);
}

/** A stable sort by Starlark comparison, optionally by key (called once per element, in order). */
function sortValues(thread: Thread, elems: readonly Value[], keyFn: Value | undefined, reverse: boolean): Value[] {
  if (keyFn === undefined) {
    if (allOfType(elems, 'number')) return sortInts(elems as number[], reverse);
    if (allOfType(elems, 'string')) return sortStrings(elems as string[], reverse);
    return sortByValue(elems, reverse);
  }
  const keys = elems.map((v) => thread.call(keyFn, [v]));
  return sortByKeys(elems, keys, reverse);
}

function allOfType(a: readonly Value[], t: 'number' | 'string'): boolean {
  for (let i = 0; i < a.length; i++) if (typeof a[i] !== t) return false;
  return true;
}

function bytesBuiltin(_t: Thread, args: Value[], kwargs: Kwargs | null): Value {
  noKwargs('bytes', kwargs);
  if (args.length !== 1) throw new StarlarkError(`bytes: got ${args.length} arguments, want exactly 1`);
  const x = args[0]!;
  if (typeof x === 'string') return StarBytes.fromString(x);
  if (x instanceof StarBytes) return x;
  const elems = elementsOf(x);
  if (elems === undefined) throw new StarlarkError(`bytes: got ${typeName(x)}, want string, bytes, or iterable of ints`);
  const out = new Uint8Array(elems.length);
  elems.forEach((e, i) => {
    if (typeof e !== 'number') throw new StarlarkError(`bytes: at index ${i}, got ${typeName(e)}, want int`);
    if (e < 0 || e > 255) throw new StarlarkError(`bytes: at index ${i}, ${e} out of range (want value in unsigned 8-bit range)`);
    out[i] = e;
  });
  return new StarBytes(out);
}

/** `fail(*args, sep=" ", msg=None, attr=None)`: stops evaluation with `fail: ...`. */
function failBuiltin(_t: Thread, args: Value[], kwargs: Kwargs | null): Value {
  let sep = ' ';
  let attr: Value | undefined;
  const parts = args.map((a) => str(a));
  for (const [k, v] of kwargs ?? []) {
    if (k === 'sep') {
      if (typeof v !== 'string') throw new StarlarkError(`fail: for parameter sep: got ${typeName(v)}, want string`);
      sep = v;
    } else if (k === 'msg') parts.unshift(str(v));
    else if (k === 'attr') attr = v;
    else throw new StarlarkError(`fail: unexpected keyword argument ${repr(k)}`);
  }
  const msg = parts.join(sep);
  const prefix = attr !== undefined && attr !== None ? `attribute ${str(attr)}: ` : '';
  throw new StarlarkError(`fail: ${prefix}${msg}`);
}

function printBuiltin(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
  let sep = ' ';
  for (const [k, v] of kwargs ?? []) {
    if (k !== 'sep') throw new StarlarkError(`print: unexpected keyword argument ${repr(k)}`);
    if (typeof v !== 'string') throw new StarlarkError(`print: for parameter sep: got ${typeName(v)}, want string`);
    sep = v;
  }
  let msg = '';
  for (let i = 0; i < args.length; i++) msg += (i > 0 ? sep : '') + str(args[i]!);
  thread.print(msg);
  return None;
}

const BUILTINS: [string, BuiltinImpl][] = [
  [
    'abs',
    (_t, args, kwargs) => {
      positionalArgs('abs', args, kwargs, 1, 1);
      const x = args[0]!;
      if (typeof x === 'number') return Math.abs(x);
      if (typeof x === 'bigint') return x < 0n ? -x : x;
      if (x instanceof StarFloat) return x.value < 0 || Object.is(x.value, -0) ? new StarFloat(-x.value) : x;
      throw new StarlarkError(`abs: for parameter x: got ${typeName(x)}, want int or float`);
    },
  ],
  [
    'all',
    (_t, args, kwargs) => {
      positionalArgs('all', args, kwargs, 1, 1);
      return iterableArg('all', args[0]!).every((e) => truth(e));
    },
  ],
  [
    'any',
    (_t, args, kwargs) => {
      positionalArgs('any', args, kwargs, 1, 1);
      return iterableArg('any', args[0]!).some((e) => truth(e));
    },
  ],
  [
    'bool',
    (_t, args, kwargs) => {
      positionalArgs('bool', args, kwargs, 0, 1);
      return args.length === 0 ? false : truth(args[0]!);
    },
  ],
  ['bytes', bytesBuiltin],
  [
    'chr',
    (_t, args, kwargs) => {
      noKwargs('chr', kwargs);
      if (args.length !== 1) throw new StarlarkError(`chr: got ${args.length} arguments, want 1`);
      const i = args[0]!;
      if (typeof i !== 'number' && typeof i !== 'bigint') throw new StarlarkError(`chr: got ${typeName(i)}, want int`);
      if (i < 0) throw new StarlarkError(`chr: Unicode code point ${i} out of range (<0)`);
      if (i > 0x10ffff) throw new StarlarkError(`chr: Unicode code point U+${i.toString(16).toUpperCase()} out of range (>0x10FFFF)`);
      return String.fromCodePoint(Number(i));
    },
  ],
  [
    'dict',
    (_t, args, kwargs) => {
      const d = new StarDict();
      updateDict('dict', d, args, kwargs);
      return d;
    },
  ],
  [
    'dir',
    (_t, args, kwargs) => {
      noKwargs('dir', kwargs);
      if (args.length !== 1) throw new StarlarkError(`dir: got ${args.length} arguments, want 1`);
      return new StarList(attrNames(args[0]!));
    },
  ],
  [
    'enumerate',
    (_t, args, kwargs) => {
      const a = unpackArgs('enumerate', args, kwargs, ['iterable', 'start?']);
      const start = a[1] === undefined ? 0 : wantSmallInt('enumerate', 'start', a[1]);
      const elems = elementsOf(a[0]!);
      if (elems === undefined) throw new StarlarkError(`enumerate: for parameter iterable: got ${typeName(a[0]!)}, want iterable`);
      return new StarList(elems.map((e, i) => new StarTuple([start + i, e])));
    },
  ],
  ['fail', failBuiltin],
  ['float', floatBuiltin],
  [
    'getattr',
    (_t, args, kwargs) => {
      positionalArgs('getattr', args, kwargs, 2, 3);
      const name = args[1]!;
      if (typeof name !== 'string') throw new StarlarkError(`getattr: for parameter name: got ${typeName(name)}, want string`);
      const v = findAttr(args[0]!, name);
      if (v !== undefined) return v;
      if (args.length === 3) return args[2]!;
      throw new StarlarkError(`getattr: ${typeName(args[0]!)} has no .${name} field or method`);
    },
  ],
  [
    'hasattr',
    (_t, args, kwargs) => {
      positionalArgs('hasattr', args, kwargs, 2, 2);
      const name = args[1]!;
      if (typeof name !== 'string') throw new StarlarkError(`hasattr: for parameter name: got ${typeName(name)}, want string`);
      return findAttr(args[0]!, name) !== undefined;
    },
  ],
  [
    'hash',
    (_t, args, kwargs) => {
      positionalArgs('hash', args, kwargs, 1, 1);
      const x = args[0]!;
      if (typeof x === 'string') return hashValue(x); // Java's String.hashCode, as starlark-go and Bazel
      if (!(x instanceof StarBytes)) throw new StarlarkError(`hash: got ${typeName(x)}, want string or bytes`);
      // FNV-1a over the bytes, unsigned, as starlark-go.
      let h = 0x811c9dc5;
      for (const b of x.data) h = Math.imul(h ^ b, 16777619);
      return h >>> 0;
    },
  ],
  ['int', intBuiltin],
  [
    'len',
    (_t, args, kwargs) => {
      positionalArgs('len', args, kwargs, 1, 1);
      const x = args[0]!;
      if (typeof x === 'string') return x.length;
      const n = typeof x === 'object' ? x.len() : -1;
      if (n < 0) throw new StarlarkError(`len: value of type ${typeName(x)} has no len`);
      return n;
    },
  ],
  [
    'list',
    (_t, args, kwargs) => {
      positionalArgs('list', args, kwargs, 0, 1);
      if (args.length === 0) return new StarList([]);
      return new StarList(iterableArg('list', args[0]!).slice());
    },
  ],
  ['max', (t, args, kwargs) => minMax('max', t, args, kwargs)],
  ['min', (t, args, kwargs) => minMax('min', t, args, kwargs)],
  [
    'ord',
    (_t, args, kwargs) => {
      noKwargs('ord', kwargs);
      if (args.length !== 1) throw new StarlarkError(`ord: got ${args.length} arguments, want 1`);
      const x = args[0]!;
      if (typeof x === 'string') {
        const n = [...x].length;
        if (n !== 1) throw new StarlarkError(`ord: string encodes ${n} Unicode code points, want 1`);
        return x.codePointAt(0)!;
      }
      if (x instanceof StarBytes) {
        if (x.data.length !== 1) throw new StarlarkError(`ord: bytes has length ${x.data.length}, want 1`);
        return x.data[0]!;
      }
      throw new StarlarkError(`ord: got ${typeName(x)}, want string or bytes`);
    },
  ],
  ['print', printBuiltin],
  [
    'range',
    (_t, args, kwargs) => {
      positionalArgs('range', args, kwargs, 1, 3);
      let start = 0;
      let stop: number;
      let step = 1;
      if (args.length === 1) stop = rangeArg(args[0]!, 1);
      else {
        start = rangeArg(args[0]!, 1);
        stop = rangeArg(args[1]!, 2);
        if (args.length === 3) step = rangeArg(args[2]!, 3);
      }
      if (step === 0) throw new StarlarkError('range: step argument must not be zero');
      return new StarRange(start, stop, step);
    },
  ],
  [
    'repr',
    (_t, args, kwargs) => {
      positionalArgs('repr', args, kwargs, 1, 1);
      return repr(args[0]!);
    },
  ],
  [
    'reversed',
    (_t, args, kwargs) => {
      positionalArgs('reversed', args, kwargs, 1, 1);
      const elems = elementsOf(args[0]!);
      if (elems === undefined) throw new StarlarkError(`reversed: for parameter sequence: got ${typeName(args[0]!)}, want iterable`);
      return new StarList(elems.slice().reverse());
    },
  ],
  ['sorted', sortedBuiltin],
  [
    'str',
    (_t, args, kwargs) => {
      noKwargs('str', kwargs);
      if (args.length !== 1) throw new StarlarkError(`str: got ${args.length} arguments, want exactly 1`);
      return str(args[0]!);
    },
  ],
  [
    'tuple',
    (_t, args, kwargs) => {
      positionalArgs('tuple', args, kwargs, 0, 1);
      if (args.length === 0) return EMPTY_TUPLE;
      const x = args[0]!;
      if (x instanceof StarTuple) return x;
      return new StarTuple(iterableArg('tuple', x).slice());
    },
  ],
  [
    'type',
    (_t, args, kwargs) => {
      noKwargs('type', kwargs);
      if (args.length !== 1) throw new StarlarkError(`type: got ${args.length} arguments, want exactly 1`);
      return typeName(args[0]!);
    },
  ],
  [
    'zip',
    (_t, args, kwargs) => {
      noKwargs('zip', kwargs);
      const seqs = args.map((a, i) => {
        const e = elementsOf(a);
        if (e === undefined) throw new StarlarkError(`zip: argument #${i + 1} is not iterable: ${typeName(a)}`);
        return e;
      });
      if (seqs.length === 0) return new StarList([]);
      const n = seqs.reduce((least, s) => Math.min(least, s.length), Infinity);
      const out: Value[] = [];
      for (let i = 0; i < n; i++) out.push(new StarTuple(seqs.map((s) => s[i]!)));
      return new StarList(out);
    },
  ],
];

const SET_BUILTIN: [string, BuiltinImpl] = [
  'set',
  (_t, args, kwargs) => {
    positionalArgs('set', args, kwargs, 0, 1);
    const s = new StarSet();
    if (args.length === 1) for (const e of iterableArg('set', args[0]!)) s.add(e);
    return s;
  },
];

/**
 * The universal names of the language: constants and builtins shared by every module. `set` is
 * included only when the dialect enables it.
 */
export function universe(options: { set?: boolean } = {}): ReadonlyMap<string, Value> {
  return options.set ? UNIVERSE_WITH_SET : UNIVERSE;
}

const UNIVERSE = new Map<string, Value>([
  ['None', None],
  ['True', true],
  ['False', false],
  ...BUILTINS.map(([name, impl]): [string, Value] => [name, new Builtin(name, impl)]),
]);
const UNIVERSE_WITH_SET = new Map<string, Value>([...UNIVERSE, [SET_BUILTIN[0], new Builtin(SET_BUILTIN[0], SET_BUILTIN[1])]]);

/** Every universal name (with `set`), for resolvers. */
export const UNIVERSAL_NAMES: readonly string[] = ['None', 'True', 'False', ...BUILTINS.map((b) => b[0]), 'set'];
