import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';

/**
 * bazel-skylib 1.0.3's own test suite, from Debian's bazel-skylib package, set up by
 * scripts/rule-sets/skylib-suite.sh as a user of the package would (a minimal WORKSPACE), against
 * Bazel 4.2.3's answers recorded by scripts/rule-sets/record-reference.mjs: `query //...` lists the
 * same labels, `build --keep_going -- //... -//:distribution` fails only where it waits on work in
 * progress, and `test //tests/...` passes every test Bazel passes but those.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KILN = join(REPO, 'bin', 'kiln');
const SKYLIB = '/usr/share/bazel/tools/skylib';
const REFERENCE: { skylibPackage: string; query: string[]; tests: Record<string, string> } = JSON.parse(
  readFileSync(join(import.meta.dirname, 'fixtures', 'skylib-1.0.3-bazel-4.2.3.json'), 'utf8'),
);

const available = existsSync(join(SKYLIB, 'lib', 'unittest.bzl'));
const built = existsSync(join(REPO, 'dist', 'bundle', 'kiln.js'));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe.skipIf(
  !needTool("Debian's bazel-skylib", available, 'scripts/test-setup.d/50-bazel-rule-sets.sh (apt-get install bazel-skylib)') ||
    !needTool('the built kiln (dist/)', built, 'npm run build'),
)('bazel-skylib 1.0.3 suite', () => {
  let base: string;
  let ws: string;
  let env: NodeJS.ProcessEnv;
  const kiln = (args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      const child = spawn(KILN, args, { cwd: ws, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'kiln-skylib-'));
    ws = join(base, 'ws');
    const setup = spawnSync('bash', [join(REPO, 'scripts', 'rule-sets', 'skylib-suite.sh'), ws], { encoding: 'utf8' });
    if (setup.status !== 0) throw new Error(`skylib-suite.sh failed: ${setup.stderr}`);
    // The suite's e2e tests run `bazel` from PATH: here, Kiln.
    const bin = join(base, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'bazel'), `#!/bin/sh\nexec ${JSON.stringify(KILN)} "$@"\n`);
    chmodSync(join(bin, 'bazel'), 0o755);
    const home = join(base, 'home');
    mkdirSync(home);
    env = { ...process.env, HOME: home, PATH: `${bin}:${process.env['PATH']}`, KILN_SYSTEM_BAZELRC: '' };
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('query //... lists the labels Bazel 4.2.3 lists', async () => {
    const installed = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'bazel-skylib'], { encoding: 'utf8' }).stdout;
    expect(installed, 'the recording is of another bazel-skylib: run scripts/rule-sets/record-reference.mjs').toBe(REFERENCE.skylibPackage);
    const run = await kiln(['query', '//...']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n').filter(Boolean).sort()).toEqual(REFERENCE.query);
  });

  it('build --keep_going -- //... -//:distribution succeeds', { timeout: 120_000 }, async () => {
    const run = await kiln(['build', '--keep_going', '--', '//...', '-//:distribution']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/^ERROR: /m);
  });

  it('test //tests/... passes every one of the 87 tests Bazel 4.2.3 passes', { timeout: 240_000 }, async () => {
    const run = await kiln(['test', '--keep_going', '//tests/...']);
    const passed = new Set([...run.stdout.matchAll(/^(\/\/\S+)\s+PASSED/gm)].map((m) => m[1]!));
    const bazelPassed = Object.entries(REFERENCE.tests)
      .filter(([, status]) => status === 'PASSED')
      .map(([label]) => label);
    expect(bazelPassed).toHaveLength(87);
    expect(
      bazelPassed.filter((label) => !passed.has(label)),
      run.stdout + run.stderr,
    ).toEqual([]);
    expect(run.code, run.stderr).toBe(0);
  });
});
