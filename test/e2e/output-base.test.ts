import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { needTool } from '../setup/need-tool.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const RUN_BINARY = needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build');

const WORKSPACE = {
  WORKSPACE: '',
  'pkg/BUILD': ['genrule(name = "g", outs = ["g.txt"], cmd = "echo hi > $@")', 'sh_test(name = "t", srcs = ["t.sh"])', ''].join('\n'),
  'pkg/t.sh': 'exit 0\n',
};

/** The built binary as a user runs it: the only cache directory it may use comes from XDG_CACHE_HOME. */
function kiln(ws: E2eWorkspace, cacheHome: string, args: string[]) {
  const run = spawnSync(BINARY, args, {
    cwd: ws.root,
    env: { HOME: ws.home, XDG_CACHE_HOME: cacheHome, PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return run;
}

describe('one output base for every command', () => {
  it.skipIf(!RUN_BINARY)(
    'after build, query and test, clean --expunge leaves nothing under XDG_CACHE_HOME',
    () => {
      const ws = new E2eWorkspace(WORKSPACE);
      const cacheHome = join(ws.home, 'xdg-cache');
      const outputBase = kiln(ws, cacheHome, ['info', 'output_base']).stdout.trim();
      kiln(ws, cacheHome, ['build', '--spawn_strategy=local', '//pkg:g']);
      expect(kiln(ws, cacheHome, ['query', 'deps(//pkg:t)']).stdout).toContain('//pkg:t\n');
      kiln(ws, cacheHome, ['test', '--spawn_strategy=local', '//pkg:t']);
      expect(readdirSync(join(cacheHome, 'kiln'))).toEqual([outputBase.slice(join(cacheHome, 'kiln').length + 1)]);
      kiln(ws, cacheHome, ['clean', '--expunge']);
      expect(readdirSync(join(cacheHome, 'kiln'))).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!RUN_BINARY)(
    '--output_base is honoured by query as by build',
    () => {
      const ws = new E2eWorkspace(WORKSPACE);
      const cacheHome = join(ws.home, 'xdg-cache');
      const base = join(ws.home, 'ob');
      kiln(ws, cacheHome, ['query', `--output_base=${base}`, '//pkg:all']);
      kiln(ws, cacheHome, ['--output_base', base, 'query', '//pkg:all']);
      expect(existsSync(join(base, 'loading'))).toBe(true);
      expect(existsSync(join(cacheHome, 'kiln'))).toBe(false);
    },
    60_000,
  );
});
