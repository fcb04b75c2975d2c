import { describe, expect, it } from 'vitest';
import { instantiateShared, specialize } from '../../../src/starlark/eval/specialize.js';
import { execFile, repr, StarlarkError, Thread, type Value } from '../../../src/starlark/index.js';

describe('templates', () => {
  const src = 'return function add(v) { return v + k; };';

  it('shares one compiled function per template at top level, each instance with its own dependencies', () => {
    const one = instantiateShared<(v: number) => number>({ k: 1 }, src);
    const two = instantiateShared<(v: number) => number>({ k: 2 }, src);
    expect([one(10), two(10)]).toEqual([11, 12]);
    expect(one).not.toBe(two);
    expect(() => instantiateShared({ j: 1 }, src)).toThrow(/internal error: template instantiated with dependencies j, compiled with k/);
  });

  it('makes new code per node inside functions', () => {
    expect(specialize<(v: number) => number>({ k: 3 }, src)(1)).toBe(4);
  });

  it('takes its dependencies from several objects, in order, as from one', () => {
    const sum = 'return function sum() { return a + b + c; };';
    expect(specialize<() => string>([{ a: 'x' }, { b: 'y', c: 'z' }], sum)()).toBe('xyz');
    expect(instantiateShared<() => string>([{ a: '1', b: '2' }, { c: '3' }], sum)()).toBe('123');
    expect(() => instantiateShared([{ b: '1', a: '2' }, { c: '3' }], sum)).toThrow(/instantiated with dependencies b, a, c, compiled with a, b, c/);
  });
});

/**
 * Each construct is one template, instantiated per node inside functions and shared at top level:
 * the same expression gives the same value, or the same error, in both places.
 */
describe('top-level code and function bodies run the same constructs', () => {
  const cases = [
    '[x * 2 for x in [1, 2, 3] if x != 2]',
    '{k: v for k, v in [("a", 1), ("b", 2)]}',
    '(1 if [] else 2, 0 or "x", 1 and None)',
    '[[1, 2][1], (3, 4)[0], {"a": 5}["a"], "xyz"[2]]',
    '"a,b".split(",") + [len("abc")]',
    'sorted([3, 1, 2], key = lambda v: -v, reverse = True)',
    '[0, 1][2]',
    '{"a": 1}["b"]',
    '"abc".nosuch()',
    'len(*[[1]])',
    '(lambda: 1)(2)',
    'None()',
  ];

  function outcome(source: string): string {
    try {
      const globals = execFile(new Thread('t', {}, { topLevelControl: true, globalReassign: true }), 't.star', source, new Map<string, Value>());
      return repr(globals.get('r')!);
    } catch (e) {
      if (e instanceof StarlarkError || e instanceof Error) return `error: ${e.message}`;
      throw e;
    }
  }

  it.each(cases)('%s', (expr) => {
    const top = outcome(`r = ${expr}\n`);
    const inFunction = outcome(`def f():\n    return ${expr}\nr = f()\n`);
    expect(inFunction).toBe(top);
  });

  it('loops and statements', () => {
    const body = [
      'acc = []',
      'for i in range(4):',
      '    if i == 2:',
      '        continue',
      '    acc.append(i)',
      'd = {}',
      'd["k"] = acc',
      'n = 0',
      'n += len(acc)',
      'r = (d, n)',
    ];
    const top = outcome(body.join('\n') + '\n');
    const inFunction = outcome(`def f():\n${body.map((l) => `    ${l}`).join('\n')}\n    return r\nr = f()\n`);
    expect(top).toBe('({"k": [0, 1, 3]}, 3)');
    expect(inFunction).toBe(top);
  });
});
