import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const BUILT = needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build');
const GENRULE = 'genrule(name = "g", outs = ["g.txt"], cmd = "echo > $@")\n';

function kiln(ws: E2eWorkspace, args: string[]) {
  return spawnSync(BINARY, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 180_000, maxBuffer: 64 << 20 });
}

/** `count` lines made by `line(i)`, then `tail`. */
function generated(count: number, line: (i: number) => string, tail = GENRULE): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(line(i));
  return lines.join('') + tail;
}

// No input size may crash the loader: a generated BUILD file loads, or fails with a clear error.
describe('generated BUILD files of any size (the built binary)', () => {
  it.skipIf(!BUILT)(
    'loads 70,000 top-level statements and a 10 MB file',
    () => {
      const wide = 'x'.repeat(80);
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        'many/BUILD': generated(70_000, (i) => `v${i} = ${i}\n`),
        'ten/BUILD': generated(100_000, (i) => `v${i} = ["${wide}", ${i}]\n`),
      });
      expect(ws.read('ten/BUILD').length).toBeGreaterThan(10_000_000);
      for (const pkg of ['many', 'ten']) {
        const run = kiln(ws, ['build', '--nobuild', `//${pkg}:g`]);
        expect(run.stderr).not.toMatch(/FATAL|Maximum call stack/);
        expect(run.status, run.stderr).toBe(0);
        expect(run.stderr).toContain('INFO: Build completed successfully');
      }
    },
    300_000,
  );

  it.skipIf(!BUILT)(
    'reports 70,000 undefined names and over-deep nesting as errors at their positions',
    () => {
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        'undefined/BUILD': generated(70_000, (i) => `v${i} = missing_${i}\n`),
        'brackets/BUILD': `x = ${'['.repeat(100_000)}${']'.repeat(100_000)}\n${GENRULE}`,
        'sum/BUILD': `x = ${Array.from({ length: 100_000 }, (_, i) => `[${i}]`).join(' + ')}\n${GENRULE}`,
      });
      const undefinedNames = kiln(ws, ['build', '--nobuild', '//undefined:g']);
      expect(undefinedNames.status, undefinedNames.stderr).toBe(1);
      expect(undefinedNames.stderr).toContain('ERROR: undefined/BUILD:1:6: undefined: missing_0');
      expect(undefinedNames.stderr).toContain('ERROR: undefined/BUILD:70000:10: undefined: missing_69999');
      const brackets = kiln(ws, ['build', '--nobuild', '//brackets:g']);
      expect(brackets.status, brackets.stderr).toBe(1);
      expect(brackets.stderr).toMatch(/^ERROR: brackets\/BUILD:1:\d+: code nested too deeply$/m);
      const sum = kiln(ws, ['build', '--nobuild', '//sum:g']);
      expect(sum.status, sum.stderr).toBe(1);
      expect(sum.stderr).toMatch(/^ERROR: sum\/BUILD:1:\d+: expression nested too deeply$/m);
    },
    300_000,
  );

  it.skipIf(!BUILT)(
    'refuses a BUILD or .bzl file past 32 MiB with an error naming it (a 100 MB file was a V8 fatal error)',
    () => {
      const comments = `${'#'.repeat(79)}\n`.repeat((33 << 20) / 80);
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        'big/BUILD': comments + GENRULE,
        'bzl/BUILD': 'load(":big.bzl", "x")\n' + GENRULE,
        'bzl/big.bzl': comments + 'x = 1\n',
      });
      const build = kiln(ws, ['build', '--nobuild', '//big:g']);
      expect(build.status, build.stderr).toBe(1);
      expect(build.stderr).toContain('ERROR: big/BUILD:1:1: big/BUILD is larger than 32 MiB, the most Kiln reads from a BUILD or .bzl file\n');
      const bzl = kiln(ws, ['query', '//bzl:g']);
      expect(bzl.status, bzl.stderr).toBe(7);
      expect(bzl.stderr).toContain('bzl/big.bzl is larger than 32 MiB, the most Kiln reads from a BUILD or .bzl file');
    },
    300_000,
  );
});
