/**
 * Property test of the evaluator: random, depth-bounded expressions over every value type, operator,
 * built-in function and method, each evaluated under `catch` by `kiln starlark --assert`. Every
 * expression must give a value or a clean Starlark error: the run exits 0, and nothing escapes as a
 * JavaScript exception or an internal error. Values are kept small so that no expression can run long.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runStarlark } from '../run-starlark-cli.js';

const INTS = ['0', '1', '-1', '2', '7', '-13', '255', '(1 << 63)', '(1 << 64)', '-(1 << 70)', '9007199254740993'];
const FLOATS = ['0.0', '-0.0', '1.5', '-2.25', '1e300', 'float("nan")', 'float("inf")', '1e-7'];
const STRINGS = ['""', '"a"', '"abc"', '"a,b,,c"', '" x y "', '"Дом"', '"😀"', '"%s-%d"', '"{}{x}"', '"\\n\\t"'];
const OTHER = ['None', 'True', 'False', 'b""', 'b"ab\\xff"', 'range(5)', 'range(10, 0, -3)', 'struct(a = 1)', 'len', '(lambda x: x)'];

const BINARY = ['+', '-', '*', '/', '//', '%', '&', '|', '^', '<<', '>>', '==', '!=', '<', '<=', '>', '>=', 'in', 'not in', 'and', 'or'];
const UNARY = ['-', '+', '~', 'not '];
const BUILTINS = [
  'len',
  'str',
  'repr',
  'bool',
  'int',
  'float',
  'list',
  'tuple',
  'dict',
  'sorted',
  'reversed',
  'min',
  'max',
  'abs',
  'any',
  'all',
  'enumerate',
  'zip',
  'hash',
  'type',
  'dir',
  'range',
  'bytes',
  'hasattr',
  'getattr',
  'json.encode',
  'json.decode',
];
const METHODS = [
  'capitalize',
  'count',
  'elems',
  'endswith',
  'find',
  'format',
  'index',
  'isalnum',
  'isalpha',
  'isdigit',
  'islower',
  'isspace',
  'istitle',
  'isupper',
  'join',
  'lower',
  'lstrip',
  'partition',
  'removeprefix',
  'removesuffix',
  'replace',
  'rfind',
  'rindex',
  'rpartition',
  'rsplit',
  'rstrip',
  'split',
  'splitlines',
  'startswith',
  'strip',
  'title',
  'upper',
  'append',
  'clear',
  'extend',
  'insert',
  'pop',
  'remove',
  'get',
  'items',
  'keys',
  'popitem',
  'setdefault',
  'update',
  'values',
];

const leaf = fc.constantFrom(...INTS, ...FLOATS, ...STRINGS, ...OTHER);

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(fc.constantFrom(...UNARY), tie('expr')).map(([op, a]) => `(${op}${a})`),
    fc.array(tie('expr'), { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
    fc.array(tie('expr'), { maxLength: 3 }).map((xs) => `(${xs.join(', ')}${xs.length === 1 ? ',' : ''})`),
    fc.array(fc.tuple(tie('expr'), tie('expr')), { maxLength: 2 }).map((kv) => `{${kv.map(([k, v]) => `${k}: ${v}`).join(', ')}}`),
    fc.tuple(fc.constantFrom(...BUILTINS), fc.array(tie('expr'), { maxLength: 2 })).map(([f, xs]) => `${f}(${xs.join(', ')})`),
    fc.tuple(tie('expr'), fc.constantFrom(...METHODS), fc.array(tie('expr'), { maxLength: 2 })).map(([x, m, xs]) => `(${x}).${m}(${xs.join(', ')})`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, i]) => `(${x})[${i}]`),
    fc
      .tuple(tie('expr'), fc.option(tie('expr')), fc.option(tie('expr')), fc.option(tie('expr')))
      .map(([x, a, b, c]) => `(${x})[${a ?? ''}:${b ?? ''}:${c ?? ''}]`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, c, b]) => `(${a} if ${c} else ${b})`),
    fc.tuple(tie('expr'), tie('expr')).map(([body, xs]) => `[x for x in ${xs} if ${body}]`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `("%s %r" % (${a}, ${b}))`),
  ),
}));

describe('fuzz: the evaluator gives a value or a clean error', () => {
  it('random expressions under catch()', async () => {
    const exprs = fc.sample(expr, { numRuns: Number(process.env.KILN_FUZZ_RUNS ?? 1500), seed: Number(process.env.KILN_FUZZ_SEED ?? 424242) });
    const dir = mkdtempSync(join(tmpdir(), 'kiln-starlark-evalfuzz-'));
    let succeeded = 0;
    try {
      const batch = 100;
      for (let i = 0; i < exprs.length; i += batch) {
        const lines = exprs.slice(i, i + batch).map((e) => `print(type(catch(lambda: ${e})))`);
        writeFileSync(join(dir, 'main.star'), lines.join('\n') + '\n');
        const r = await runStarlark(['--assert', '--option=set', 'main.star'], dir);
        if (r.code !== 0) {
          // Find the first expression of the batch that fails on its own, to make the report precise.
          for (const e of exprs.slice(i, i + batch)) {
            writeFileSync(join(dir, 'one.star'), `print(type(catch(lambda: ${e})))\n`);
            const one = await runStarlark(['--assert', '--option=set', 'one.star'], dir);
            expect(one.code, `expression: ${e}\nstderr: ${one.stderr}`).toBe(0);
          }
        }
        expect(r.code, r.stderr).toBe(0);
        const outcomes = r.stdout.split('\n').filter(Boolean);
        expect(outcomes.every((l) => l === 'NoneType' || l === 'string')).toBe(true);
        succeeded += outcomes.filter((l) => l === 'NoneType').length;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Most random expressions are type errors; enough of them must succeed for the test to mean something.
    if (process.env.KILN_FUZZ_STATS) console.log(`${succeeded} of ${exprs.length} expressions gave a value`);
    expect(succeeded).toBeGreaterThan(exprs.length / 10);
  }, 120_000);
});
