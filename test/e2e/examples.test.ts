import { spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { needTool } from '../setup/need-tool.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const BUILT = existsSync(join(REPO, 'dist/bundle/kiln.js'));

/** A copy of examples/ (without convenience symlinks a developer's build left there). */
function examplesCopy(): E2eWorkspace {
  const ws = new E2eWorkspace({});
  cpSync(join(REPO, 'examples'), ws.root, { recursive: true, filter: (src) => !/\/kiln-[a-z]+$/.test(src) });
  return ws;
}

describe("examples/ (the README's first command)", () => {
  it('builds //... in process: tool in exec config, selects across packages, a Starlark rule, a skylib flag, an output group, kiln run of a genrule and an sh_binary', async () => {
    const ws = examplesCopy();
    const run = await ws.kiln(['build', '--spawn_strategy=local', '//...']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/report.txt')).toBe('mode: development\nhello\nworld\nfirst: hello\nHELLO\nWORLD\nhi\ncounts: 2 files, style plain\ndone.\n');
    // The Starlark rule's default output, and its output group through the filegroup.
    expect(ws.read('kiln-bin/stats/counts.counts')).toBe('1 text/hello.txt\n1 text/world.txt\n2 total\n');
    expect(ws.read('kiln-bin/stats/counts.summary')).toBe('counts: 2 files, style plain\n');
    // The skylib-style flags, each through a config_setting with only flag_values (valid in Bazel),
    // in every compilation mode: `--//config:excited` picks the other branch of the bool_flag's select.
    for (const mode of ['fastbuild', 'opt']) {
      const loud = await ws.kiln(['build', '--spawn_strategy=local', '-c', mode, '--//config:style=loud', '--//config:excited', '//app:report']);
      expect(loud.code, loud.stderr).toBe(0);
      expect(ws.read('kiln-bin/app/report.txt')).toMatch(/counts: 2 files, style LOUD\ndone!\n$/);
    }
    const calm = await ws.kiln(['build', '--spawn_strategy=local', '--no//config:excited', '//app:report']);
    expect(calm.code, calm.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/report.txt')).toMatch(/style plain\ndone\.\n$/);
    const opt = await ws.kiln(['build', '--spawn_strategy=local', '-c', 'opt', '--define=greeting=formal', '//app:report']);
    expect(opt.code, opt.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/report.txt')).toBe(
      'mode: optimized\nhello\nworld\nfirst: hello\nHELLO\nWORLD\nGood day\ncounts: 2 files, style plain\ndone.\n',
    );
    const hello = await ws.kiln(['run', '--spawn_strategy=local', '//app:hello', '--', 'Kiln']);
    expect(hello.code, hello.stderr).toBe(0);
    expect(hello.stdout).toBe('hi, Kiln!\n');
    const count = await ws.kiln(['run', '--spawn_strategy=local', '//app:count', '--', 'a', 'b c']);
    expect(count.code, count.stderr).toBe(0);
    expect(count.stdout).toBe('2 arguments: a b c\n');
  });

  // The built binary, once, as a user runs it (npm run build makes dist/ before the tests).
  it.skipIf(!needTool('the built bin/kiln', BUILT, 'npm run build'))('the built bin/kiln builds it and a second run is a null build', () => {
    const ws = examplesCopy();
    const env = { HOME: ws.home, PATH: process.env.PATH };
    const first = spawnSync(BINARY, ['build', '--spawn_strategy=local', '//...'], { cwd: ws.root, env, encoding: 'utf8' });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('INFO: Build completed successfully, 10 total actions');
    expect(ws.read('kiln-bin/text/rest/others.txt')).toBe('world\n');
    const second = spawnSync(BINARY, ['build', '--spawn_strategy=local', '//...'], { cwd: join(ws.root, 'app'), env, encoding: 'utf8' });
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain('INFO: 0 processes.\nINFO: Build completed successfully, 10 total actions');
  });
});
