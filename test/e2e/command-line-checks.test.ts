import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { BUILD_OPTIONS } from '../../src/analysis/index.js';
import { E2eWorkspace } from './e2e-workspace.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const RUN_BINARY = needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build');

function kiln(ws: E2eWorkspace, args: string[]) {
  return spawnSync(BINARY, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
}

describe('command-line checks of the built binary', () => {
  it.skipIf(!RUN_BINARY)(
    'refuses --jobs below 1 and options Kiln does not implement, exit 2',
    () => {
      const ws = new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': 'genrule(name = "g", outs = ["g.txt"], cmd = "echo hi > $@")\n' });
      const jobs = kiln(ws, ['build', '--jobs=-3', '//pkg:g']);
      expect(jobs.status).toBe(2);
      expect(jobs.stderr).toBe("ERROR: While parsing option --jobs=-3: Value '(-3)' must be at least 1.\n");
      // The sandbox paths are host paths: a relative one names nothing.
      for (const flag of ['--sandbox_writable_path=x', '--sandbox_tmpfs_path=y']) {
        const run = kiln(ws, ['build', flag, '//pkg:g']);
        expect(run.status, run.stderr).toBe(2);
        expect(run.stderr).toContain(`ERROR: While parsing option ${flag}: must be an absolute path\n`);
      }
      const tolerated = kiln(ws, ['build', '--spawn_strategy=local', '--nobuild_runfile_links', '//pkg:g']);
      expect(tolerated.status, tolerated.stderr).toBe(0);
      expect(tolerated.stderr).toContain('WARNING: --nobuild_runfile_links: it has no effect in Kiln yet; ignored\n');
    },
    120_000,
  );

  it.skipIf(!RUN_BINARY)(
    'kiln help build lists every build option from the registry',
    () => {
      const ws = new E2eWorkspace({ WORKSPACE: '' });
      const help = kiln(ws, ['help', 'build']);
      expect(help.status).toBe(0);
      expect(help.stdout.startsWith('Usage: kiln build <options> <targets>\n')).toBe(true);
      expect(help.stdout).toContain('  --[no]keep_going [-k] (a boolean; default: "false")\n    Continue after an error as far as possible.\n');
      expect(help.stdout).toContain('  --jobs [-j] (an integer; default: "auto")\n');
      for (const def of [...BUILD_OPTIONS.definitions()].filter((d) => !d.internal))
        expect(help.stdout).toMatch(new RegExp(`^  --(\\[no\\])?${def.name} `, 'm'));
      expect(kiln(ws, ['help', 'no_such_command']).status).toBe(2);
    },
    60_000,
  );
});
