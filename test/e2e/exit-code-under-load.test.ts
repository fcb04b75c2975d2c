import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const BUILT = existsSync(join(REPO, 'dist/bundle/kiln.js'));

const busy: ChildProcess[] = [];

/**
 * Processes that keep the cores busy until the test ends (and at most a minute), each the leader of
 * its own process group: a SIGKILL of `timeout` alone would leave its shell spinning.
 */
function contendForCpu(count: number): void {
  for (let i = 0; i < count; i++) busy.push(spawn('timeout', ['60', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore', detached: true }));
}

afterEach(() => {
  for (const child of busy.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

// The helper processes actions start from come up while loading runs; a command that fails in
// loading closes them while they may still be starting, and must still exit with its own code
// (Node exits 13 when the top-level await is left pending with nothing to keep the process alive).
describe('exit codes of the built binary under CPU contention', () => {
  it.skipIf(!needTool('the built kiln (dist/)', BUILT, 'npm run build'))(
    'a .bzl that fails to load always exits 1, never 13',
    () => {
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        'syntax/BUILD': 'load(":defs.bzl", "x")\nx()\n',
        'syntax/defs.bzl': 'def x(:\n    pass\n',
        'fails/BUILD': 'load(":defs.bzl", "x")\nx()\n',
        'fails/defs.bzl': 'fail("no")\nx = 1\n',
      });
      contendForCpu(3);
      const codes = new Map<number | null, number>();
      for (let i = 0; i < 40; i++) {
        const pattern = i % 2 === 0 ? '//syntax:all' : '//fails:all';
        const run = spawnSync(BINARY, ['build', pattern], { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 30_000 });
        codes.set(run.status, (codes.get(run.status) ?? 0) + 1);
      }
      expect(Object.fromEntries(codes)).toEqual({ 1: 40 });
    },
    120_000,
  );
});
