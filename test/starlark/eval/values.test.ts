import { describe, expect, it } from 'vitest';
import { StarlarkError } from '../../../src/starlark/eval/starlark-error.js';
import { repr, hashValue, str } from '../../../src/starlark/eval/values/describe.js';
import { StarDict } from '../../../src/starlark/eval/values/dict.js';
import { compare, equals } from '../../../src/starlark/eval/values/equality.js';
import { formatFloat, StarFloat } from '../../../src/starlark/eval/values/float.js';
import { intAdd, intFloorDiv, intMod, intMul, intShiftLeft, intShiftRight, intSub, normalizeBig } from '../../../src/starlark/eval/values/int.js';
import { StarList, StarTuple } from '../../../src/starlark/eval/values/list.js';
import { StarSet } from '../../../src/starlark/eval/values/set.js';
import { None } from '../../../src/starlark/eval/values/value.js';

const MAX = Number.MAX_SAFE_INTEGER;

describe('int', () => {
  it('overflows exactly into bigint and normalises back', () => {
    expect(intAdd(MAX, 1)).toBe(BigInt(MAX) + 1n);
    expect(intSub(intAdd(MAX, 1), 1)).toBe(MAX);
    expect(intMul(2 ** 30, 2 ** 30)).toBe(2n ** 60n);
    expect(normalizeBig(5n)).toBe(5);
  });

  it('floors division and modulo toward negative infinity (sign of the divisor)', () => {
    const table: [number, number, number, number][] = [
      [7, 2, 3, 1],
      [-7, 2, -4, 1],
      [7, -2, -4, -1],
      [-7, -2, 3, -1],
      [0, 5, 0, 0],
    ];
    for (const [a, b, q, r] of table) {
      expect([intFloorDiv(a, b), intMod(a, b)], `${a} // ${b}`).toEqual([q, r]);
      expect([intFloorDiv(BigInt(a) * 2n ** 60n, BigInt(b) * 2n ** 60n)]).toEqual([q]);
    }
    expect(intMod(-(2n ** 70n), 7)).toBe(5);
    expect(() => intFloorDiv(1, 0)).toThrow('floored division by zero');
    expect(() => intMod(1, 0)).toThrow('integer modulo by zero');
  });

  it('shifts with the spec errors', () => {
    expect(intShiftLeft(1, 70)).toBe(2n ** 70n);
    expect(intShiftRight(-(2n ** 70n), 68)).toBe(-4);
    expect(intShiftRight(-5, 1)).toBe(-3);
    expect(() => intShiftLeft(1, -1)).toThrow('negative shift count: -1');
    expect(() => intShiftLeft(1, 512)).toThrow('shift count too large: 512');
  });
});

describe('float', () => {
  it('formats like starlark-go', () => {
    const table: [number, string][] = [
      [1, '1.0'],
      [0.1, '0.1'],
      [1e100, '1e+100'],
      [123456, '123456.0'],
      [1234567, '1.234567e+06'],
      [1e-5, '1e-05'],
      [-0, '-0.0'],
      [Infinity, '+inf'],
      [-Infinity, '-inf'],
      [NaN, 'nan'],
    ];
    for (const [f, s] of table) expect(formatFloat(f, 'g'), String(f)).toBe(s);
    expect(formatFloat(1.5, 'e')).toBe('1.500000e+00');
    expect(formatFloat(1.5, 'f')).toBe('1.500000');
    expect(formatFloat(1e22, 'f')).toBe('10000000000000000000000.000000');
  });

  it('compares exactly with big ints and orders NaN above +Inf', () => {
    expect(equals(2 ** 53, new StarFloat(2 ** 53))).toBe(true);
    expect(equals(2n ** 53n + 1n, new StarFloat(2 ** 53))).toBe(false);
    expect(compare(2n ** 53n + 1n, new StarFloat(2 ** 53))).toBe(1);
    expect(compare(new StarFloat(NaN), new StarFloat(Infinity))).toBe(1);
    expect(equals(new StarFloat(NaN), new StarFloat(NaN))).toBe(true);
  });
});

describe('strings and hashing', () => {
  it('quotes with starlark-go escapes', () => {
    expect(repr('a"b\\c\n\t\x01')).toBe('"a\\"b\\\\c\\n\\t\\x01"');
    expect(repr('héllo')).toBe('"héllo"');
    expect(str('plain')).toBe('plain');
  });

  it('hashes strings as Java String.hashCode', () => {
    expect(hashValue('a')).toBe(97);
    expect(hashValue('hello')).toBe(99162322);
    expect(hashValue(1)).toBe(hashValue(new StarFloat(1)));
  });
});

describe('dict and set keys', () => {
  it('follow Starlark equality, not JS identity', () => {
    const d = new StarDict();
    d.set(1, 'int');
    d.set(new StarFloat(1), 'float');
    d.set(new StarTuple([1, 'x']), 'tuple');
    expect(d.len()).toBe(2);
    expect(d.get(1)).toBe('float');
    expect(d.get(new StarTuple([new StarFloat(1), 'x']))).toBe('tuple');
    expect(() => d.set(new StarList([]), 1)).toThrow('unhashable type: list');
    expect(repr(d)).toBe('{1: "float", (1, "x"): "tuple"}');
  });

  it('keeps insertion order across deletes', () => {
    const s = new StarSet();
    for (const v of [3, 1, 2]) s.add(v);
    s.table.delete(1);
    s.add(1);
    expect(repr(s)).toBe('set([3, 2, 1])');
    expect(repr(new StarSet())).toBe('set([])');
  });

  it('rejects mutation when frozen', () => {
    const d = new StarDict();
    d.freeze();
    expect(() => d.set('a', None)).toThrow(StarlarkError);
    expect(() => d.set('a', None)).toThrow('cannot insert into frozen hash table');
  });
});

describe('containers', () => {
  it('print cycles as ...', () => {
    const l = new StarList([1]);
    l.elems.push(l);
    expect(repr(l)).toBe('[1, [...]]');
  });

  it('compare lexicographically and refuse unordered types', () => {
    expect(compare(new StarList([1, 2]), new StarList([1, 3]))).toBe(-1);
    expect(compare(new StarTuple([1]), new StarTuple([1, 0]))).toBe(-1);
    expect(() => compare(new StarDict(), new StarDict())).toThrow('dict < dict not implemented');
  });
});
