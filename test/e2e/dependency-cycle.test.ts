import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const RUN_BINARY = needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build');
const FIXTURE = join(import.meta.dirname, 'fixtures/dependency-cycle');

describe('a dependency cycle (the built binary)', () => {
  // fixtures/dependency-cycle/bazel-2.1.0.stderr is what Bazel 2.1.0 printed for this workspace
  // (`bazel build //a:top`, the workspace path replaced by %WORKSPACE%).
  it.skipIf(!RUN_BINARY)("is reported as Bazel reports it: the closing rule's position, the path to the cycle, the cycle in order", () => {
    const ws = new E2eWorkspace({});
    cpSync(FIXTURE, ws.root, { recursive: true, filter: (src) => !src.endsWith('.stderr') });
    const run = spawnSync(BINARY, ['build', '//a:top'], { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(1);
    const bazel = readFileSync(join(FIXTURE, 'bazel-2.1.0.stderr'), 'utf8').split('\n');
    // Bazel prints the BUILD file's absolute path; Kiln prints paths relative to the workspace, as everywhere.
    const block = bazel
      .slice(0, bazel.indexOf('`-- //a:x') + 1)
      .join('\n')
      .replace('%WORKSPACE%/', '');
    expect(run.stderr).toContain(`${block}\n`);
  });
});
