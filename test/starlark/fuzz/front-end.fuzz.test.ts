/**
 * Property tests of the Starlark front end through the public entry (src/starlark/index.ts) and the
 * `kiln starlark` command: random bytes, random token sequences and mutations of every program of the
 * conformance suite go into the scanner, parser and resolver. Each input must give a result or a
 * KilnError with a position inside the input, never another exception; the command must exit 0 or 1
 * (never 37, an internal error) with well-formed error lines. Runs are bounded to keep this fast.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KilnError } from '../../../src/core/index.js';
import { isUniversal, parseFile, resolveFileCollectingErrors, Scanner, Token } from '../../../src/starlark/index.js';
import { parseChunkedFile } from '../chunked-file.js';
import { runStarlark } from '../run-starlark-cli.js';

const FILE = 'fuzz.star';
const ALL_OPTIONS = { set: true, globalReassign: true, loadBindsGlobally: true, recursion: true, while: true, topLevelControl: true };

/** The starting corpus: every module of every chunk of the conformance suite. */
const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), '..', 'testdata');
const CORPUS: string[] = readdirSync(TESTDATA)
  .filter((f) => f.endsWith('.star'))
  .flatMap((f) => parseChunkedFile(f, readFileSync(join(TESTDATA, f), 'utf8')))
  .flatMap((c) => c.modules.map((m) => m.source.replace(/^\n+/, '')));

/** Starlark's token vocabulary, with a few malformed tokens and layout characters. */
const VOCABULARY = [
  // keywords and reserved words
  'and',
  'break',
  'continue',
  'def',
  'elif',
  'else',
  'for',
  'if',
  'in',
  'lambda',
  'load',
  'not',
  'or',
  'pass',
  'return',
  'while',
  'as',
  'assert',
  'class',
  'del',
  'global',
  'import',
  'is',
  'nonlocal',
  'raise',
  'try',
  'yield',
  // identifiers
  'x',
  'y',
  'f',
  'None',
  'True',
  'False',
  'len',
  'print',
  'range',
  '_p',
  'Ω',
  // literals, good and bad
  '0',
  '7',
  '0x1f',
  '0o17',
  '0b101',
  '012',
  '0x',
  '1.5',
  '.5',
  '1e10',
  '1e400',
  '1.e',
  '"s"',
  "'s'",
  '"""t"""',
  "'''t'''",
  'r"\\d"',
  'b"\\xff"',
  'rb"x"',
  '"\\u00e9"',
  '"\\q"',
  '"\\x8"',
  '"open',
  "'''open",
  '"\\',
  // punctuation
  '+',
  '-',
  '*',
  '/',
  '//',
  '%',
  '**',
  '~',
  '&',
  '|',
  '^',
  '<<',
  '>>',
  '.',
  ',',
  '=',
  ';',
  ':',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '<',
  '>',
  '>=',
  '<=',
  '==',
  '!=',
  '+=',
  '-=',
  '*=',
  '/=',
  '//=',
  '%=',
  '&=',
  '|=',
  '^=',
  '<<=',
  '>>=',
  // stray characters and layout
  '!',
  '$',
  '?',
  '`',
  '\\',
  '#c',
  '\n',
  '\n',
  '\n ',
  '\n  ',
  '\n    ',
  '\n\t',
  '\r\n',
  ' ',
  '\t',
  '\f',
  '\0',
];
const token = fc.constantFrom(...VOCABULARY);
const tokenProgram = fc.array(token, { maxLength: 80 }).map((ts) => ts.join(' '));
/** Token sequences laid out as lines with indentation, closer to real code. */
const linedProgram = fc
  .array(fc.tuple(fc.nat({ max: 3 }), fc.array(token, { minLength: 1, maxLength: 8 })), { maxLength: 12 })
  .map((lines) => lines.map(([indent, ts]) => '    '.repeat(indent) + ts.join(' ')).join('\n') + '\n');

type Edit = { kind: 'delete' | 'insert' | 'duplicate-line' | 'swap-lines' | 'indent' | 'dedent' | 'truncate'; at: number; tok: string };
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'duplicate-line', 'swap-lines', 'indent', 'dedent', 'truncate'),
  at: fc.nat(),
  tok: token,
});

function applyEdit(src: string, e: Edit): string {
  const i = e.at % (src.length + 1);
  const lines = src.split('\n');
  const l = e.at % lines.length;
  switch (e.kind) {
    case 'delete':
      return src.slice(0, i) + src.slice(i + 1 + (e.at % 5));
    case 'insert':
      return src.slice(0, i) + e.tok + src.slice(i);
    case 'duplicate-line':
      lines.splice(l, 0, lines[l]!);
      return lines.join('\n');
    case 'swap-lines': {
      const m = (l + 1) % lines.length;
      [lines[l], lines[m]] = [lines[m]!, lines[l]!];
      return lines.join('\n');
    }
    case 'indent':
      lines[l] = '  ' + lines[l];
      return lines.join('\n');
    case 'dedent':
      lines[l] = lines[l]!.replace(/^ {1,4}/, '');
      return lines.join('\n');
    case 'truncate':
      return src.slice(0, i);
  }
}

const mutatedProgram = fc.tuple(fc.constantFrom(...CORPUS), fc.array(edit, { minLength: 1, maxLength: 5 })).map(([src, edits]) => edits.reduce(applyEdit, src));

/** A KilnError from the front end must point inside the input: 1 <= line <= lines+1, col >= 1. */
function checkPosition(e: KilnError, src: string): void {
  expect(e.pos, `no position: ${e.message}`).toBeDefined();
  // The scanner ends lines at \n, \r\n and a lone \r, as starlark-go does.
  const lines = src.split(/\r\n|\r|\n/).length;
  expect(e.pos!.file).toBe(FILE);
  expect(e.pos!.line).toBeGreaterThanOrEqual(1);
  expect(e.pos!.line).toBeLessThanOrEqual(lines + 1);
  expect(e.pos!.col).toBeGreaterThanOrEqual(1);
  expect(e.format()).not.toContain('\n');
}

type Outcome = 'ok' | 'syntax-error' | 'static-errors';

/** Scans, parses and resolves (strict dialect and the most permissive one); throws anything that is not a KilnError. */
function frontEnd(src: string): Outcome {
  const scanner = new Scanner(src, FILE);
  try {
    for (let steps = 0; scanner.next() !== Token.EOF; steps++) {
      if (steps > 4 * src.length + 64) throw new Error('scanner makes no progress');
    }
  } catch (e) {
    if (!(e instanceof KilnError)) throw e;
  }
  let file;
  try {
    file = parseFile(src, FILE);
  } catch (e) {
    if (!(e instanceof KilnError)) throw e;
    checkPosition(e, src);
    return 'syntax-error';
  }
  const strict = resolveFileCollectingErrors(file, {}, () => false, isUniversal);
  for (const e of strict) {
    expect(e).toBeInstanceOf(KilnError);
    checkPosition(e, src);
  }
  const relaxed = resolveFileCollectingErrors(parseFile(src, FILE), ALL_OPTIONS, (n) => n === 'native', isUniversal);
  for (const e of relaxed) checkPosition(e, src);
  return strict.length > 0 ? 'static-errors' : 'ok';
}

function tally(runs: number, arb: fc.Arbitrary<string>): Record<Outcome, number> {
  const seen: Record<Outcome, number> = { ok: 0, 'syntax-error': 0, 'static-errors': 0 };
  fc.assert(
    fc.property(arb, (src) => {
      seen[frontEnd(src)]++;
    }),
    { numRuns: runs },
  );
  return seen;
}

describe('fuzz: the Starlark front end never crashes', () => {
  it('has a corpus', () => expect(CORPUS.length).toBeGreaterThan(300));

  it('random bytes (as UTF-8 and as Latin-1)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        frontEnd(Buffer.from(bytes).toString('utf8'));
        frontEnd(Buffer.from(bytes).toString('latin1'));
      }),
      { numRuns: 1500 },
    );
  });

  it('random token sequences reach the parser and the resolver', () => {
    const seen = tally(2500, fc.oneof(tokenProgram, linedProgram));
    if (process.env.KILN_FUZZ_STATS) console.log('token sequences', seen);
    // The vocabulary is rich enough that some sequences get past the parser.
    expect(seen.ok + seen['static-errors']).toBeGreaterThan(0);
  });

  it('mutated conformance programs', () => {
    const seen = tally(2500, mutatedProgram);
    if (process.env.KILN_FUZZ_STATS) console.log('mutated programs', seen);
    expect(seen['syntax-error']).toBeGreaterThan(0);
    expect(seen.ok + seen['static-errors']).toBeGreaterThan(0);
  });

  it('deep nesting gives a result or a KilnError, not a stack overflow', () => {
    for (const depth of [100, 1000, 5000]) {
      for (const src of [
        `x = ${'('.repeat(depth)}1${')'.repeat(depth)}\n`,
        `x = ${'['.repeat(depth)}${']'.repeat(depth)}\n`,
        `x = ${'-'.repeat(depth)}1\n`,
        `x = 1${' + 1'.repeat(depth)}\n`,
        `x = ${'not '.repeat(depth)}True\n`,
        `x = ${'lambda: '.repeat(depth)}1\n`,
        `x = ${'a if b else '.repeat(depth)}c\n`,
        `def f():\n${Array.from({ length: Math.min(depth, 400) }, (_, i) => `${' '.repeat(i + 1)}if x:\n`).join('')}${' '.repeat(Math.min(depth, 400) + 1)}pass\n`,
      ]) {
        frontEnd(src);
      }
    }
  });
});

describe('fuzz: kiln starlark --resolve-only and --parse-only', () => {
  it('exit 0 or 1 with well-formed error lines, never an internal error', async () => {
    const samples = fc.sample(fc.oneof(mutatedProgram, linedProgram, tokenProgram), { numRuns: 150, seed: 20261122 });
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'kiln-starlark-fuzz-'));
    try {
      for (const src of samples) {
        writeFileSync(join(dir, FILE), src);
        for (const mode of ['--parse-only', '--resolve-only']) {
          const r = await runStarlark([mode, FILE], dir);
          expect([0, 1], `${mode} exited ${r.code} on ${JSON.stringify(src)}:\n${r.stderr}`).toContain(r.code);
          expect(r.stdout).toBe('');
          if (r.code === 1) expect(r.stderr.split('\n')[0]).toMatch(/^fuzz\.star:\d+:\d+: \S/);
          else expect(r.stderr).toBe('');
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
