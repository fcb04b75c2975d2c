/**
 * The command-line contract of `kiln starlark`: exit codes, the exact first stderr line,
 * stdout for print only, load() resolution and caching, dialect options, --parse-only,
 * --resolve-only, --predeclare. Most cases run the command in-process; a few run the built binary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_OPTION_NAMES } from '../../src/starlark/index.js';
import { runStarlark } from './run-starlark-cli.js';
import { needTool } from '../setup/need-tool.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kiln-starlark-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes files (path → text) under the test's temp dir. */
function files(tree: Record<string, string>): void {
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const run = (...args: string[]) => runStarlark(args, dir);
const firstLine = (s: string) => s.split('\n')[0];

describe('kiln starlark: success and print', () => {
  it('exits 0 and writes print output to stdout only', async () => {
    files({ 'main.star': 'print("hello", 1, [2])\nprint("a", "b", sep = "-")\nprint()\nx = 1\n' });
    const r = await run('main.star');
    expect(r).toEqual({ code: 0, stdout: 'hello 1 [2]\na-b\n\n', stderr: '' });
  });

  it('prints strings without quotes and other values as str()', async () => {
    files({ 'main.star': 'print("q\\"uote", None, True, 1.5, {"k": "v"}, (1,))\n' });
    const r = await run('main.star');
    expect(r.stdout).toBe('q"uote None True 1.5 {"k": "v"} (1,)\n');
    expect(r.code).toBe(0);
  });

  it('evaluates a file named by an absolute path', async () => {
    files({ 'main.star': 'print("abs")\n' });
    const r = await runStarlark([join(dir, 'main.star')], '/');
    expect(r).toEqual({ code: 0, stdout: 'abs\n', stderr: '' });
  });
});

describe('kiln starlark: errors', () => {
  it('reports fail() with sep as FILE:LINE:COL: fail: MESSAGE and exits 1', async () => {
    files({ 'main.star': 'x = 1\nfail(1, 2, sep="/")\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toBe('main.star:2:5: fail: 1/2');
    expect(r.stdout).toBe('');
  });

  it('reports the Starlark call stack after the first line', async () => {
    files({ 'main.star': 'def inner():\n    fail("deep")\n\ndef middle():\n    inner()\n\ndef outer():\n    middle()\n\nouter()\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    const [first, ...rest] = r.stderr.split('\n');
    expect(first).toBe('main.star:2:9: fail: deep');
    const trace = rest.join('\n');
    for (const frame of ['inner', 'middle', 'outer']) expect(trace).toContain(frame);
    expect(trace).toMatch(/main\.star:10:\d+/);
  });

  it('reports every static error of a normal run, one line each', async () => {
    files({ 'main.star': 'a = b\nc = d\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => /^main\.star:\d+:\d+: /.test(l));
    expect(lines).toEqual(['main.star:1:5: undefined: b', 'main.star:2:5: undefined: d']);
  });

  it('keeps output printed before a dynamic error', async () => {
    files({ 'main.star': 'print("before")\nx = {}["k"]\nprint("after")\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('before\n');
    expect(firstLine(r.stderr)).toMatch(/^main\.star:2:\d+: key "k" not in dict$/);
  });

  it('reports a dynamic error at the innermost frame', async () => {
    files({ 'main.star': 'def inner():\n    return 1 // 0\n\ndef outer():\n    return inner()\n\nouter()\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:2:\d+: floored division by zero$/);
  });

  it('names the file as given, relative or nested', async () => {
    files({ 'pkg/sub/main.star': '\n\ny = undefined_name\n' });
    const r = await run('pkg/sub/main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toBe('pkg/sub/main.star:3:5: undefined: undefined_name');
  });

  it('reports a static error at its token before running anything', async () => {
    files({ 'main.star': 'print("never")\ndef f():\n    return nope\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    // starlark-go's spelling hint folds case, so `nope` is one edit from the universal `None`.
    expect(firstLine(r.stderr)).toBe('main.star:3:12: undefined: nope (did you mean None?)');
  });

  it('reports a syntax error with its position', async () => {
    files({ 'main.star': 'x = 1\ny = (2 +\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:\d+:\d+: \S/);
  });

  it('reports an error message on one line', async () => {
    files({ 'main.star': 'fail("two\\nlines")\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:1:5: fail: two/);
  });

  it('fails cleanly on a missing file', async () => {
    const r = await run('missing.star');
    expect([1, 2]).toContain(r.code);
    expect(r.stderr).toContain('missing.star');
  });
});

describe('kiln starlark: usage errors exit 2', () => {
  it.each([[[] as string[]], [['a.star', 'b.star']], [['--option=nonesuch', 'main.star']], [['--frobnicate', 'main.star']]])('%j', async (args) => {
    files({ 'main.star': 'x = 1\n', 'a.star': '', 'b.star': '' });
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toBe('');
  });
});

describe('kiln starlark: load', () => {
  it('resolves load() relative to the loading file and runs each module once', async () => {
    files({
      'main.star': 'load("pkg/a.star", "a")\nload("lib.star", "v")\nprint(a, v)\n',
      'pkg/a.star': 'load("b.star", "b")\nload("../lib.star", "v")\na = "a" + b + v\n',
      'pkg/b.star': 'b = "b"\n',
      'lib.star': 'print("lib runs")\nv = "v"\n',
    });
    const r = await run('main.star');
    expect(r).toEqual({ code: 0, stdout: 'lib runs\nabv v\n', stderr: '' });
  });

  it('does not export _-prefixed names', async () => {
    files({ 'main.star': 'load("lib.star", "_x")\n', 'lib.star': '_x = 1\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:1:\d+: .*_x/);
  });

  it('does not export predeclared names', async () => {
    files({ 'main.star': 'load("lib.star", "len")\n', 'lib.star': 'x = len([])\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:1:\d+: .*len/);
  });

  it('reports a load cycle', async () => {
    files({ 'main.star': 'load("a.star", "a")\n', 'a.star': 'load("b.star", "b")\na = 1\n', 'b.star': 'load("a.star", "a")\nb = 1\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^\S+:\d+:\d+: .*cycle/);
  });

  it('reports an error inside a loaded module', async () => {
    files({ 'main.star': 'load("lib.star", "x")\n', 'lib.star': 'x = 1\nfail("in lib")\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('fail: in lib');
    expect(firstLine(r.stderr)).toMatch(/^\S*lib\.star:2:5: fail: in lib$/);
  });

  it('freezes the globals of a loaded module', async () => {
    files({ 'main.star': 'load("lib.star", "l")\nl.append(2)\n', 'lib.star': 'l = [1]\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:2:\d+: .*frozen/);
  });

  it('reports a missing module at the load statement', async () => {
    files({ 'main.star': 'x = 1\nload("nope.star", "y")\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:2:\d+: .*nope\.star/);
  });
});

describe('kiln starlark: dialect options', () => {
  const recursive = 'def f(n):\n    return 0 if n == 0 else f(n - 1)\nprint(f(3))\n';

  it('forbids recursion by default and allows it with --option=recursion', async () => {
    files({ 'main.star': recursive });
    const denied = await run('main.star');
    expect(denied.code).toBe(1);
    expect(firstLine(denied.stderr)).toMatch(/^main\.star:2:\d+: function f called recursively$/);
    const allowed = await run('--option=recursion', 'main.star');
    expect(allowed).toEqual({ code: 0, stdout: '0\n', stderr: '' });
  });

  it('stops runaway recursion cleanly', async () => {
    files({ 'main.star': 'def f(n):\n    return f(n + 1)\nf(0)\n' });
    const r = await run('--option=recursion', 'main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:\d+:\d+: /);
  });

  it.each([
    ['set', 'x = set([1])\n'],
    ['globalreassign', 'x = 1\nx = 2\n'],
    ['while', 'def f():\n    while False:\n        pass\nf()\n'],
    ['toplevelcontrol', 'for x in []:\n    pass\nif True:\n    pass\n'],
  ])('--option=%s enables what is otherwise a static error', async (option, source) => {
    files({ 'main.star': source });
    const strict = await run('main.star');
    expect(strict.code).toBe(1);
    expect(firstLine(strict.stderr)).toMatch(/^main\.star:\d+:\d+: /);
    expect(await run(`--option=${option}`, 'main.star')).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('takes every dialect option the interpreter has, by its name in lower case', async () => {
    files({ 'main.star': 'x = 1\n' });
    expect(DIALECT_OPTION_NAMES.length).toBeGreaterThan(0);
    for (const name of DIALECT_OPTION_NAMES) {
      expect(await run(`--option=${name.toLowerCase()}`, 'main.star'), name).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('accepts several options', async () => {
    files({ 'main.star': 'i = 0\nwhile i < 2:\n    i += 1\nprint(i)\n' });
    const r = await run('--option=while', '--option=toplevelcontrol', '--option=globalreassign', 'main.star');
    expect(r).toEqual({ code: 0, stdout: '2\n', stderr: '' });
  });
});

describe('kiln starlark: --parse-only, --resolve-only, --predeclare', () => {
  it('--parse-only checks syntax only', async () => {
    files({ 'ok.star': 'x = undefined_name\nfail("not run")\n', 'bad.star': 'x = = 1\n' });
    expect(await run('--parse-only', 'ok.star')).toEqual({ code: 0, stdout: '', stderr: '' });
    const bad = await run('--parse-only', 'bad.star');
    expect(bad.code).toBe(1);
    expect(firstLine(bad.stderr)).toMatch(/^bad\.star:1:5: /);
  });

  it('--resolve-only reports every static error, one line each, and runs nothing', async () => {
    files({ 'main.star': 'print("no")\na = b\nc = d\ndef f():\n    break\n' });
    const r = await run('--resolve-only', 'main.star');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => /^main\.star:\d+:\d+: /.test(l));
    expect(lines).toEqual(['main.star:2:5: undefined: b', 'main.star:3:5: undefined: d', 'main.star:5:5: break not in a loop']);
  });

  it('--resolve-only does not evaluate dynamic errors', async () => {
    files({ 'main.star': 'x = 1 // 0\nfail("no")\n' });
    expect(await run('--resolve-only', 'main.star')).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('--predeclare adds names for the static checks', async () => {
    files({ 'main.star': 'x = ctx.attr\ny = native\n' });
    const without = await run('--resolve-only', 'main.star');
    expect(without.code).toBe(1);
    const withNames = await run('--resolve-only', '--predeclare=ctx', '--predeclare=native', 'main.star');
    expect(withNames).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('kiln starlark: --assert helpers', () => {
  it('predeclares catch, matches, module and _freeze', async () => {
    files({
      'main.star': [
        'print(catch(lambda: 1))',
        'print(catch(lambda: fail("boom")))',
        'print(matches("b+", "abbc"), matches("^b", "abc"))',
        'm = module("m", x = 1)',
        'print(type(m), m.x)',
        'l = _freeze([1])',
        'print(catch(lambda: l.append(2)) != None, str(_freeze))',
      ].join('\n'),
    });
    const r = await run('--assert', 'main.star');
    expect(r).toEqual({
      code: 0,
      stdout: 'None\nfail: boom\nTrue False\nmodule 1\nTrue <built-in function freeze>\n',
      stderr: '',
    });
  });

  it('predeclares them in loaded modules too', async () => {
    files({ 'main.star': 'load("lib.star", "r")\nprint(r)\n', 'lib.star': 'r = catch(lambda: fail("x"))\n' });
    expect(await run('--assert', 'main.star')).toEqual({ code: 0, stdout: 'fail: x\n', stderr: '' });
  });

  it('module values are immutable', async () => {
    files({ 'main.star': 'm = module("m", x = 1)\nm.x = 2\n' });
    const r = await run('--assert', 'main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toMatch(/^main\.star:2:\d+: /);
  });

  it('does not predeclare the helpers without --assert', async () => {
    files({ 'main.star': 'catch(lambda: 1)\n' });
    const r = await run('main.star');
    expect(r.code).toBe(1);
    expect(firstLine(r.stderr)).toBe('main.star:1:1: undefined: catch');
  });
});

// End-to-end through the real launcher and the compiled output of `npm run build`.
const built = existsSync(join(REPO, 'dist/src/cli/index.js'));

describe.skipIf(!needTool('the built kiln (dist/)', built, 'npm run build'))('kiln starlark: the built binary', () => {
  const kiln = (args: string[]) =>
    spawnSync(process.execPath, [join(REPO, 'bin/kiln.js'), 'starlark', ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });

  it('runs a program and prints to stdout', () => {
    files({ 'main.star': 'load("lib.star", "sq")\nprint([sq(i) for i in range(4)])\n', 'lib.star': 'def sq(x):\n    return x * x\n' });
    const r = kiln(['main.star']);
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: '[0, 1, 4, 9]\n', stderr: '' });
  });

  it('exits 1 with FILE:LINE:COL: MESSAGE on the first stderr line', () => {
    files({ 'main.star': '\nfail(1, 2, sep="/")\n' });
    const r = kiln(['main.star']);
    expect(r.status).toBe(1);
    expect(firstLine(r.stderr)).toBe('main.star:2:5: fail: 1/2');
  });

  it('exits 2 on a usage error', () => {
    const r = kiln(['--option=bogus', 'main.star']);
    expect(r.status).toBe(2);
  });
});
