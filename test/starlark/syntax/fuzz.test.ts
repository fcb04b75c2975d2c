import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { KilnError } from '../../../src/core/index.js';
import { resolveFile } from '../../../src/starlark/resolve/index.js';
import { parseFile, printFile, Scanner, Token } from '../../../src/starlark/syntax/index.js';

// Random input into scanner, parser and resolver must end in a result or a KilnError subclass:
// never another exception, never a hang. Runs are bounded so the suite stays fast.

/** Each property stops early (without failing) after this long on a slow or busy machine. */
const TIME_LIMIT_MS = 8_000;
const LIMITS = { interruptAfterTimeLimit: TIME_LIMIT_MS };

const UNIVERSAL = new Set(['None', 'True', 'False', 'len', 'print', 'range', 'set', 'struct']);

/** Scans, parses and resolves; returns what happened, throws anything that is not a KilnError. */
function frontEnd(src: string): 'ok' | 'error' {
  try {
    const sc = new Scanner(src, 'fuzz.star');
    let guard = 0;
    while (sc.next() !== Token.EOF) {
      if (++guard > src.length * 4 + 100) throw new Error('scanner does not advance');
    }
    const file = parseFile(src, 'fuzz.star');
    resolveFile(
      file,
      {},
      (n) => n === 'native',
      (n) => UNIVERSAL.has(n),
    );
    resolveFile(
      parseFile(src, 'fuzz.star'),
      {
        set: true,
        globalReassign: true,
        loadBindsGlobally: true,
        while: true,
        topLevelControl: true,
      },
      () => false,
      (n) => UNIVERSAL.has(n),
    );
    return 'ok';
  } catch (e) {
    if (e instanceof KilnError) {
      // Every user-facing error prints as file:line:col: message, on one line.
      expect(e.format()).toMatch(/^fuzz\.star:\d+:\d+: [^\n]+$/);
      return 'error';
    }
    throw e;
  }
}

const TOKENS = [
  'def',
  'if',
  'elif',
  'else',
  'for',
  'in',
  'not',
  'and',
  'or',
  'while',
  'break',
  'continue',
  'pass',
  'return',
  'lambda',
  'load',
  'class',
  'x',
  'y',
  'f',
  'len',
  'None',
  '_private',
  'é',
  '0',
  '1',
  '012',
  '0x1F',
  '0o7',
  '0b2',
  '1.5e3',
  '.5',
  '1e',
  '"s"',
  "'t'",
  '"""tri\nple"""',
  'r"\\d"',
  'b"\\xff"',
  '"\\q"',
  '"open',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  ';',
  '.',
  '=',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '+',
  '-',
  '*',
  '**',
  '/',
  '//',
  '%',
  '&',
  '|',
  '^',
  '~',
  '<<',
  '>>',
  '+=',
  '-=',
  '//=',
  '|=',
  '\\',
  '!',
  '$',
  '#c',
  '\n',
  '\n',
  '\n  ',
  '\n    ',
  '\n\t',
  '\r\n',
  ' ',
];

const tokenSequence = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((toks) => toks.join(' '));

const SAMPLES = [
  'load("//pkg:defs.bzl", "rule", alias = "other")\n\ndef f(a, b = 1, *args, c, **kw):\n    """Doc."""\n    if a and not b:\n        return [x * 2 for x in args if x]\n    elif c:\n        pass\n    else:\n        for k, v in kw.items():\n            a += v[1:2:-1]\n    return lambda q, *r: q if r else -q.z\n',
  'x = {"a": [1, 2, (3,)], "b": {k: v for k, v in []}}\ny = x["a"][0] + len(x) * 3 // 2 % 7 | 8 ^ 9 & 10 << 1 >> 2\n',
  'def g():\n    n = 0\n    while n < 10:\n        n += 1\n        if n == 5:\n            break\n        continue\n    return n\n',
  'rule(\n    name = "lib",\n    srcs = glob(["*.c"]) + ["x.c"],\n    deps = [":a", "//b:c"],\n    visibility = ["//visibility:public"],\n)\n',
  's = "esc\\t\\n\\x41\\u00e9\\U0001F600\\101" + r"raw\\n" + \'\'\'multi\nline\'\'\'\nb = b"bytes\\xff\\377"\nf = 1.5e-3 + .5 + 1. + 0x7fffffffffffffffff\n',
];

/** A sample program with a few random edits (insert, delete, replace) applied. */
const mutatedSample = fc
  .tuple(fc.constantFrom(...SAMPLES), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 2 }), fc.constantFrom(...TOKENS)), { maxLength: 4 }))
  .map(([src, edits]) => {
    let s = src;
    for (const [at, op, tok] of edits) {
      const i = at % (s.length + 1);
      if (op === 0) s = s.slice(0, i) + tok + s.slice(i);
      else if (op === 1) s = s.slice(0, i) + s.slice(i + 1 + (at % 3));
      else s = s.slice(0, i) + tok + s.slice(i + tok.length);
    }
    return s;
  });

describe('fuzz: scanner, parser and resolver never crash', () => {
  test('random strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'binary' }), (s) => void frontEnd(s)),
      { ...LIMITS, numRuns: 3000 },
    );
  });

  test('random printable ASCII', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => void frontEnd(s)),
      { ...LIMITS, numRuns: 3000 },
    );
  });

  test('random bytes decoded as UTF-8', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => void frontEnd(Buffer.from(bytes).toString('utf8'))),
      { ...LIMITS, numRuns: 3000 },
    );
  });

  test('random token sequences', () => {
    let parsed = 0;
    fc.assert(
      fc.property(tokenSequence, (s) => {
        if (frontEnd(s) === 'ok') parsed++;
      }),
      { ...LIMITS, numRuns: 5000 },
    );
    expect(parsed).toBeGreaterThan(0);
  });

  test('mutated real programs', () => {
    fc.assert(
      fc.property(mutatedSample, (s) => void frontEnd(s)),
      { ...LIMITS, numRuns: 3000 },
    );
  });

  test('the samples themselves are valid', () => {
    for (const s of SAMPLES) {
      const file = parseFile(s, 'fuzz.star');
      resolveFile(
        file,
        { while: true },
        (n) => ['glob', 'rule', 'other'].includes(n),
        (n) => UNIVERSAL.has(n),
      );
    }
  });
});

describe('fuzz: the canonical printer round-trips', () => {
  test('print(parse(s)) is a fixed point for every program that parses', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedSample, tokenSequence), (s) => {
        let printed: string;
        try {
          printed = printFile(parseFile(s, 'fuzz.star'), { showParens: false });
        } catch (e) {
          if (e instanceof KilnError) return;
          throw e;
        }
        expect(printFile(parseFile(printed, 'printed.star'), { showParens: false })).toBe(printed);
      }),
      { ...LIMITS, numRuns: 3000 },
    );
  });

  test('an int before a dot keeps its parentheses', () => {
    const once = printFile(parseFile('x = 0x7.f\n', 'a.star'), { showParens: false });
    expect(once).toBe('x = (7).f');
    expect(printFile(parseFile(once, 'b.star'), { showParens: false })).toBe(once);
  });
});
