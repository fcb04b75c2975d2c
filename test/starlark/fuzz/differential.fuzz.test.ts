/**
 * Differential property test: random expressions over the part of the language where Starlark and
 * Python 3 agree (ints of any size, ASCII strings, lists, tuples, their operators, slicing, common
 * string methods and built-ins) are evaluated by `kiln starlark` and by `python3`; the JSON of each
 * result (or the fact of an error) must be the same. Known, intended differences (bools are not
 * numbers, strings are not iterable, Starlark's limits on shifts, repeats and 32-bit indices) are
 * recognised from kiln's error message and not counted.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { needTool } from '../../setup/need-tool.js';
import { runStarlark } from '../run-starlark-cli.js';

const havePython = spawnSync('python3', ['--version']).status === 0;

const INTS = ['0', '1', '-1', '2', '3', '7', '-13', '20', '255', '(1 << 63)', '(1 << 64)', '-(1 << 70)', '9007199254740993'];
const STRINGS = ['""', '"a"', '"abc"', '"a,b,,c"', '" x y "', '"Hello World"', '"a-b-c"', '"12"', '"\\n\\t"', '"aaa"'];
const BINARY = ['+', '-', '*', '//', '%', '&', '|', '^', '<<', '>>', '==', '!=', '<', '<=', '>', '>=', 'in', 'not in', 'and', 'or'];
const UNARY = ['-', '~', 'not '];
const FUNCS = ['len', 'sorted', 'min', 'max', 'abs', 'list', 'tuple', 'any', 'all', 'bool'];
const WRAPPED = ['reversed', 'range'];
const METHODS = [
  'upper',
  'lower',
  'strip',
  'lstrip',
  'rstrip',
  'split',
  'rsplit',
  'join',
  'replace',
  'find',
  'rfind',
  'count',
  'startswith',
  'endswith',
  'partition',
  'rpartition',
  'capitalize',
  'isalpha',
  'isdigit',
  'isalnum',
  'islower',
  'isupper',
  'isspace',
  'removeprefix',
  'removesuffix',
  'splitlines',
  'index',
  'rindex',
];

const leaf = fc.constantFrom(...INTS, ...STRINGS, '[]', '()');
const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(fc.constantFrom(...UNARY), tie('expr')).map(([op, a]) => `(${op}${a})`),
    fc.array(tie('expr'), { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
    fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((xs) => `(${xs.join(', ')})`),
    fc.tuple(fc.constantFrom(...FUNCS), tie('expr')).map(([f, x]) => `${f}(${x})`),
    fc.tuple(fc.constantFrom(...WRAPPED), tie('expr')).map(([f, x]) => `list(${f}(${x}))`),
    fc.tuple(tie('expr'), fc.constantFrom(...METHODS), fc.array(tie('expr'), { maxLength: 2 })).map(([x, m, xs]) => `(${x}).${m}(${xs.join(', ')})`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, i]) => `(${x})[${i}]`),
    fc
      .tuple(tie('expr'), fc.option(tie('expr')), fc.option(tie('expr')), fc.option(tie('expr')))
      .map(([x, a, b, c]) => `(${x})[${a ?? ''}:${b ?? ''}:${c ?? ''}]`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, c, b]) => `(${a} if ${c} else ${b})`),
  ),
}));

/**
 * kiln errors that reflect deliberate differences from Python, not bugs: bools are not numbers,
 * strings are not iterable, limits on shifts, repeats and indices, and `str % list` (Python quietly
 * ignores a list operand without conversions; Starlark treats it as one argument).
 */
const INTENDED = /bool|not iterable|want iterable|shift count|repeat|32-bit|out of range \(want value|arguments for format string/;
/** Python errors that are CPython's own limits, where Starlark has an answer (e.g. "" * -(1 << 70) is ""). */
const PYTHON_LIMIT = /^ERR (OverflowError|MemoryError)$/;

const STARLARK_PRELUDE = `def show(f):
    err = catch(f)
    if err != None:
        return "ERR " + err
    return json.encode(f())
`;
const PYTHON_PRELUDE = `import json, sys
sys.set_int_max_str_digits(0) if hasattr(sys, "set_int_max_str_digits") else None
def show(f):
    try:
        v = f()
    except Exception as e:
        return "ERR " + type(e).__name__
    return json.dumps(v, separators=(",", ":"), sort_keys=True)
`;

describe('fuzz: kiln agrees with python3 where the languages agree', () => {
  if (!needTool('python3', havePython, 'install python3: this test compares kiln with it')) return;
  it('random int/string/list/tuple expressions', async () => {
    const exprs = fc.sample(expr, { numRuns: Number(process.env.KILN_FUZZ_RUNS ?? 1200), seed: Number(process.env.KILN_FUZZ_SEED ?? 777) });
    const dir = mkdtempSync(join(tmpdir(), 'kiln-starlark-difffuzz-'));
    try {
      const body = exprs.map((e) => `print(show(lambda: ${e}))`).join('\n') + '\n';
      writeFileSync(join(dir, 'main.star'), STARLARK_PRELUDE + body);
      writeFileSync(join(dir, 'main.py'), PYTHON_PRELUDE + body);
      const kiln = await runStarlark(['--assert', 'main.star'], dir);
      expect(kiln.code, kiln.stderr).toBe(0);
      const py = spawnSync('python3', ['main.py'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      expect(py.status, py.stderr).toBe(0);
      const k = kiln.stdout.split('\n');
      const p = py.stdout.split('\n');
      const disagreements: string[] = [];
      let agreedValues = 0;
      exprs.forEach((e, i) => {
        const kv = k[i]!;
        const pv = p[i]!;
        const kErr = kv.startsWith('ERR ');
        const pErr = pv.startsWith('ERR ');
        if (kErr && pErr) return;
        if (kErr && INTENDED.test(kv)) return;
        if (!kErr && PYTHON_LIMIT.test(pv)) return;
        if (!kErr && !pErr && kv === pv) {
          agreedValues++;
          return;
        }
        disagreements.push(`${e}\n    kiln:   ${kv}\n    python: ${pv}`);
      });
      if (process.env.KILN_FUZZ_STATS) console.log(`${agreedValues} of ${exprs.length} expressions gave the same value`);
      expect(disagreements.slice(0, 10), `${disagreements.length} disagreements`).toEqual([]);
      // Most random expressions are errors in both languages; enough must give values to mean something.
      expect(agreedValues).toBeGreaterThan(exprs.length / 10);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
