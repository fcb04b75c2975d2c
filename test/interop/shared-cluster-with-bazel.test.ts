import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { E2eWorkspace } from '../e2e/e2e-workspace.js';
import { startKilnCluster } from '../e2e/kiln-cluster.js';
import { needTool } from '../setup/need-tool.js';

// Bazel 2.1.0 (scripts/test-setup.d/30-bazel.sh) and Kiln build the same genrule workspace on one
// `kiln cluster up` at the same time: both succeed and produce the same bytes.
const BAZEL = process.env['KILN_BAZEL'];

const FILES = {
  WORKSPACE: 'workspace(name = "shared")\n',
  'input.txt': 'some input shared by both clients\n',
  BUILD: [
    'genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello from a shared cluster > $@")',
    'genrule(name = "twice", srcs = [":hello"], outs = ["twice.txt"], cmd = "cat $< $< > $@")',
    'genrule(name = "pair", srcs = ["input.txt"], outs = ["upper.txt", "count.txt"], cmd = "tr a-z A-Z < $< > $(location upper.txt) && wc -c < $< > $(location count.txt)")',
    // Keeps Bazel's execution going while Kiln's build runs.
    'genrule(name = "slow", srcs = [":twice"], outs = ["slow.txt"], cmd = "sleep 3; sort $< > $@")',
    '',
  ].join('\n'),
};
const OUTPUTS = ['hello.txt', 'twice.txt', 'upper.txt', 'count.txt', 'slow.txt'];

describe('Kiln and Bazel 2.1.0 on one cluster', () => {
  if (!needTool('Bazel 2.1.0', BAZEL !== undefined, 'KILN_BAZEL is not set: run scripts/test-setup.d/30-bazel.sh (or npm test)')) return;
  const bazel = BAZEL!;
  let root: string | undefined;

  afterAll(async () => {
    if (!root) return;
    await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', root!], { stdio: 'ignore' }).on('close', resolve));
    await rm(root, { recursive: true, force: true });
  });

  it('build the same workspace at the same time, each getting the same outputs', { timeout: 600_000 }, async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-shared-cluster-'));
    const dir = root;
    await Promise.all(['ws', 'home', 'tmp'].map((d) => mkdir(join(dir, d))));
    for (const [name, content] of Object.entries(FILES)) await writeFile(join(dir, 'ws', name), content);
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--slots', '4']);
    let analyzed: () => void = () => {};
    const bazelAnalyzed = new Promise<void>((resolve) => (analyzed = resolve));
    const bazelBuild = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(
        bazel,
        [
          `--output_user_root=${join(dir, 'bazel-root')}`,
          '--batch',
          'build',
          `--remote_executor=${cluster.endpoint}`,
          '--noshow_progress',
          '--color=no',
          '--curses=no',
          '//...',
        ],
        {
          cwd: join(dir, 'ws'),
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(dir, 'home'), TMPDIR: join(dir, 'tmp') },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('INFO: Analyzed')) analyzed();
      });
      child.on('error', reject);
      child.on('close', (code) => {
        analyzed();
        resolve({ code, output });
      });
    });
    // Kiln starts once Bazel is executing, so both clients' actions are on the cluster together.
    await bazelAnalyzed;
    const kiln = new E2eWorkspace(FILES);
    const kilnBuild = kiln.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//...']);
    const [b, k] = await Promise.all([bazelBuild, kilnBuild]);
    expect(b.code, b.output).toBe(0);
    expect(b.output).toMatch(/INFO: \d+ processes: \d+ remote/);
    expect(k.code, k.stderr).toBe(0);
    expect(k.stderr).toMatch(/INFO: 4 processes: 4 remote\./);
    for (const f of OUTPUTS) {
      const fromBazel = await readFile(join(dir, 'ws', 'bazel-bin', f));
      expect(Buffer.from(kiln.read(`kiln-bin/${f}`)).equals(fromBazel), f).toBe(true);
    }
  });
});
