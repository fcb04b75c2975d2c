import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/commands/starlark.js';
import type { CliIO } from '../../../src/cli/io.js';

const dir = mkdtempSync(join(tmpdir(), 'kiln-starlark-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

async function kiln(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: { write: (c) => (stdout += String(c)) },
    stderr: { write: (c) => (stderr += String(c)) },
    cwd: dir,
    env: {},
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

describe('kiln starlark', () => {
  it('prints to stdout and exits 0', async () => {
    write({ 'ok.star': 'print("hello", 1, [2], sep = "|")\n' });
    expect(await kiln('ok.star')).toEqual({ code: 0, stdout: 'hello|1|[2]\n', stderr: '' });
  });

  it('reports fail() with the position of the call', async () => {
    write({ 'fail.star': 'def f():\n    fail(1, 2, sep = "/")\nf()\n' });
    const r = await kiln('fail.star');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe('fail.star:2:9: fail: 1/2');
  });

  it('loads relative to the loading file, once, without private names', async () => {
    write({
      'pkg/main.star': 'load("lib/a.star", "a")\nload("lib/b.star", "b")\nprint(a, b)\n',
      'pkg/lib/a.star': 'load("c.star", "c")\na = c + 1\nprint("a runs")\n',
      'pkg/lib/b.star': 'load("c.star", "c")\nb = c + 2\n',
      'pkg/lib/c.star': 'c = 10\n_hidden = 1\nprint("c runs")\n',
      'pkg/private.star': 'load("lib/c.star", "_hidden")\n',
    });
    expect(await kiln('pkg/main.star')).toEqual({ code: 0, stdout: 'c runs\na runs\n11 12\n', stderr: '' });
    const r = await kiln('pkg/private.star');
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(/^pkg\/private\.star:1:\d+: .*_hidden/);
  });

  it('reports a load cycle at the load', async () => {
    write({ 'cyc/a.star': 'load("b.star", "b")\na = 1\n', 'cyc/b.star': 'load("a.star", "a")\nb = 1\n' });
    const r = await kiln('cyc/a.star');
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(/^cyc\/b\.star:1:6: cannot load a\.star: cycle in load graph/);
  });

  it('reports every static error with --resolve-only', async () => {
    write({ 'static.star': 'x = y\nz = w\n' });
    const r = await kiln('--resolve-only', 'static.star');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('static.star:1:5: undefined: y\nstatic.star:2:5: undefined: w\n');
    expect((await kiln('--resolve-only', '--predeclare=y', '--predeclare=w', 'static.star')).code).toBe(0);
    expect((await kiln('--parse-only', 'static.star')).code).toBe(0);
  });

  it('honours dialect options and rejects unknown ones', async () => {
    write({ 'loop.star': 'def f():\n    i = 0\n    while i < 3:\n        i += 1\n    return i\nprint(f())\n' });
    expect((await kiln('loop.star')).code).toBe(1);
    expect(await kiln('--option=while', 'loop.star')).toEqual({ code: 0, stdout: '3\n', stderr: '' });
    expect((await kiln('--option=nonesuch', 'loop.star')).code).toBe(2);
    expect((await kiln()).code).toBe(2);
    expect((await kiln('--bogus', 'loop.star')).code).toBe(2);
  });

  it('predeclares the assert helpers with --assert', async () => {
    write({
      'assert.star': [
        'print(catch(lambda: 1 // 0), catch(lambda: 1))',
        'print(matches("b+", "abbc"), matches("^b", "abc"))',
        'm = module("m", x = 1)',
        'print(m.x, type(m), str(_freeze))',
        'l = _freeze([1])',
        'print(catch(lambda: l.append(2)))',
      ].join('\n'),
    });
    const r = await kiln('--assert', 'assert.star');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('floored division by zero None\nTrue False\n1 module <built-in function freeze>\nappend: cannot append to frozen list\n');
  });
});
